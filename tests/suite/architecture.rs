//! The binary's layers, checked on its source: its top-level modules (`src/X.rs`, `src/X/`) use
//! one another without a circle, so each can be read, tested and changed with only the ones below
//! it in mind (docs/ARCHITECTURE.md). The crates' layers are the compiler's to keep; this is the
//! same rule inside the binary, where the compiler allows a circle.
//!
//! A module uses another when its code names `crate::OTHER` (in a `use` or a path); comment lines
//! do not count, code in a module's tests does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None`: the crate root itself).
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let first = file.strip_prefix(src).ok()?.components().next()?;
    let name = first.as_os_str().to_str()?;
    let name = name.strip_suffix(".rs").unwrap_or(name);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The modules `text` names as `crate::NAME`, outside comment lines.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let Some(module) = top_module(src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let uses = graph.entry(module.clone()).or_default();
        uses.extend(named_modules(&text).into_iter().filter(|n| *n != module));
    }
    graph
}

/// One circle of `graph`, as the path that closes it, if it has any.
fn a_circle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(graph, next, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn the_binarys_modules_use_each_other_without_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    // The scan sees what it must: the doors and the gate, and what each uses.
    for module in [
        "gate", "broker", "shell", "wrap", "cli", "cmd", "env", "audit",
    ] {
        assert!(
            graph.contains_key(module),
            "{module} not found in {graph:?}"
        );
    }
    assert!(graph["broker"].contains("gate"), "{:?}", graph["broker"]);
    if let Some(circle) = a_circle(&graph) {
        panic!(
            "the binary's modules use each other in a circle: {}",
            circle.join(" → ")
        );
    }
}

/// The check itself finds a circle where there is one (and the path it names closes).
#[test]
fn a_circle_is_found_and_named() {
    fn add(graph: &mut Graph, from: &str, to: &str) {
        graph
            .entry(from.to_owned())
            .or_default()
            .insert(to.to_owned());
    }
    let mut graph = Graph::new();
    add(&mut graph, "cli", "cmd");
    add(&mut graph, "cmd", "gate");
    add(&mut graph, "gate", "broker");
    add(&mut graph, "broker", "paths");
    assert_eq!(a_circle(&graph), None);
    add(&mut graph, "broker", "gate");
    assert_eq!(
        a_circle(&graph),
        Some(vec!["broker".into(), "gate".into(), "broker".into()])
    );
    let text = "use crate::gate::{self, Outcome};\n// crate::wrap in a comment\nlet x = crate::env::get();";
    assert_eq!(
        named_modules(text),
        BTreeSet::from(["env".to_owned(), "gate".to_owned()])
    );
}
