//! A scripted reviewer server for the tests and the benchmark: a real HTTP/1.1 server on
//! 127.0.0.1 (random port) that speaks both wire formats and answers each request with the next
//! scripted [`Action`], recording every request it received.
//!
//! It is written on plain `std::net` rather than a framework so a script can also misbehave at the
//! byte level: reset the connection, wait before the first byte, send a body that never ends or one
//! of 10 MB. Every misbehaviour is bounded in time and size and stops when the client goes away.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long any misbehaviour may last before the server gives up by itself.
const MAX_MISBEHAVIOUR: Duration = Duration::from_secs(20);

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum Action {
    /// Answer with this status and JSON body.
    Json(u16, Value),
    /// Answer with this status and raw body text.
    Text(u16, String),
    /// Read the request, then reset the connection (RST) without answering.
    Reset,
    /// Wait this long before sending anything, then answer.
    SlowFirstByte(Duration, Box<Action>),
    /// Send headers and then body chunks forever (until the client leaves or the bound).
    EndlessBody,
    /// Send a 200 with a body of this many bytes.
    HugeBody(usize),
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Chooses the answer from the request itself (order-independent, for concurrent clients).
pub type Responder = Arc<dyn Fn(&Recorded) -> Action + Send + Sync>;

#[derive(Default)]
struct Shared {
    script: VecDeque<Action>,
    /// Used when the script is empty.
    fallback: Option<Action>,
    /// Used before the script, when set.
    responder: Option<Responder>,
    received: Vec<Recorded>,
}

/// The server; stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
}

impl ScriptedServer {
    pub fn start() -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Mutex::new(Shared::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared2, stop2) = (shared.clone(), stop.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = shared2.clone();
                thread::spawn(move || serve_connection(stream, shared));
            }
        });
        ScriptedServer { addr, shared, stop }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Queues actions, answered in order.
    pub fn script(&self, actions: impl IntoIterator<Item = Action>) -> &Self {
        self.shared.lock().unwrap().script.extend(actions);
        self
    }

    /// The action for every request once the script is used up.
    pub fn always(&self, action: Action) -> &Self {
        self.shared.lock().unwrap().fallback = Some(action);
        self
    }

    /// Answers every request with what `responder` makes of it, whatever the order of arrival.
    pub fn respond_with(
        &self,
        responder: impl Fn(&Recorded) -> Action + Send + Sync + 'static,
    ) -> &Self {
        self.shared.lock().unwrap().responder = Some(Arc::new(responder));
        self
    }

    pub fn received(&self) -> Vec<Recorded> {
        self.shared.lock().unwrap().received.clone()
    }

    pub fn request_count(&self) -> usize {
        self.shared.lock().unwrap().received.len()
    }

    pub fn clear(&self) {
        let mut shared = self.shared.lock().unwrap();
        shared.script.clear();
        shared.fallback = None;
        shared.responder = None;
        shared.received.clear();
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn serve_connection(stream: TcpStream, shared: Arc<Mutex<Shared>>) {
    let _ = stream.set_read_timeout(Some(MAX_MISBEHAVIOUR));
    let Ok(writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut writer = writer;
    loop {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let action = {
            let mut shared = shared.lock().unwrap();
            let responded = shared.responder.as_ref().map(|respond| respond(&request));
            shared.received.push(request);
            responded
                .or_else(|| shared.script.pop_front())
                .or_else(|| shared.fallback.clone())
                .unwrap_or(Action::Text(500, "no scripted answer".into()))
        };
        if !respond(&mut writer, action) {
            return;
        }
    }
}

/// Reads one request (request line, headers, Content-Length or chunked body).
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Recorded> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(length) = find("content-length") {
        let mut body = vec![0; length.parse().ok()?];
        reader.read_exact(&mut body).ok()?;
        body
    } else if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(reader)?
    } else {
        Vec::new()
    };
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim(), 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// Sends the answer; false when the connection is to be closed.
fn respond(stream: &mut TcpStream, action: Action) -> bool {
    match action {
        Action::Json(status, body) => write_response(stream, status, &body.to_string()),
        Action::Text(status, body) => write_response(stream, status, &body),
        Action::Reset => {
            // SO_LINGER 0 turns close into a reset.
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            use std::os::fd::AsRawFd;
            // SAFETY: a valid socket fd and a correctly sized, initialised `linger` value.
            unsafe {
                libc::setsockopt(
                    stream.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&raw const linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                );
            }
            let _ = stream.shutdown(Shutdown::Both);
            false
        }
        Action::SlowFirstByte(delay, then) => {
            thread::sleep(delay.min(MAX_MISBEHAVIOUR));
            respond(stream, *then)
        }
        Action::EndlessBody => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_err() {
                return false;
            }
            let started = Instant::now();
            while started.elapsed() < MAX_MISBEHAVIOUR {
                if stream.write_all(b"1\r\n \r\n").is_err() {
                    return false;
                }
                thread::sleep(Duration::from_millis(5));
            }
            false
        }
        Action::HugeBody(size) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {size}\r\n\r\n"
            );
            if stream.write_all(head.as_bytes()).is_err() {
                return false;
            }
            let chunk = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < size {
                let n = chunk.len().min(size - sent);
                if stream.write_all(&chunk[..n]).is_err() {
                    return false;
                }
                sent += n;
            }
            false
        }
    }
}

fn write_response(stream: &mut TcpStream, status: u16, body: &str) -> bool {
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        reason(status),
        body.len()
    );
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(body.as_bytes()).is_ok()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

// ---------------------------------------------------------------------------------------------
// Response builders for both wire formats.

/// A Chat Completions response whose message content is `content`.
pub fn openai_content(content: &str, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1727346142,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null},
            "logprobs": null,
            "finish_reason": finish
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    })
}

pub fn verdict_json(decision: &str, risk: &str, reason: &str) -> Value {
    json!({"decision": decision, "riskLevel": risk, "reason": reason})
}

/// An OpenAI answer carrying a wrapped verdict.
pub fn openai_verdict(decision: &str, risk: &str, reason: &str) -> Action {
    let content = json!({"answer": verdict_json(decision, risk, reason)}).to_string();
    Action::Json(200, openai_content(&content, "stop"))
}

/// An OpenAI answer carrying an embedded tool request.
pub fn openai_tool_request(tool: &str, path: &str, pattern: &str) -> Action {
    let content = json!({"answer": {"tool": tool, "path": path, "pattern": pattern}}).to_string();
    Action::Json(200, openai_content(&content, "stop"))
}

/// A Messages response with these content blocks.
pub fn anthropic_blocks(blocks: Value, stop: &str) -> Value {
    json!({
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "test-model",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 10}
    })
}

/// An Anthropic answer: a `submit_verdict` tool_use block.
pub fn anthropic_verdict(decision: &str, risk: &str, reason: &str) -> Action {
    Action::Json(
        200,
        anthropic_blocks(
            json!([{"type": "tool_use", "id": "toolu_v", "name": "submit_verdict",
                    "input": verdict_json(decision, risk, reason)}]),
            "tool_use",
        ),
    )
}

/// An Anthropic native tool call.
pub fn anthropic_tool_use(id: &str, name: &str, input: Value) -> Action {
    Action::Json(
        200,
        anthropic_blocks(
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
            "tool_use",
        ),
    )
}

/// A verdict in the given provider's format.
pub fn verdict_for(provider: &str, decision: &str, risk: &str, reason: &str) -> Action {
    match provider {
        "anthropic" => anthropic_verdict(decision, risk, reason),
        _ => openai_verdict(decision, risk, reason),
    }
}

/// A golden fixture (see `golden/README.md`).
pub fn golden(name: &str) -> Value {
    let path = format!(
        "{}/tests/review_support/golden/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}
