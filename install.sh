#!/usr/bin/env bash
# Build shellgate in release mode; install the binary, its shell completions and its manual page.
#
#   ./install.sh                 # installs ~/.local/bin/shellgate (and ~/.local/share/...)
#   ./install.sh --hook          # ... and adds the init line to ~/.bashrc (and zsh's startup files)
#   ./install.sh --prefix /usr/local   # installs /usr/local/bin/shellgate (and /usr/local/share/...)
#   ./install.sh --glibc         # links against glibc even where the musl build is possible
#   ./install.sh --max-speed     # whole-program LTO: ~0.3 ms quicker per line, 20-30 s longer build
#   ./install.sh --binary FILE   # installs FILE (a shellgate built already) instead of building
#
# Needs Rust (cargo, 1.88 or newer) and a C compiler (the shell grammars are C). Nothing is
# downloaded except crates by cargo. Where Rust's musl target and musl-gcc are installed
# (rustup target add x86_64-unknown-linux-musl; apt-get install musl-tools), the binary is static
# musl: a `run` line costs ~0.44 ms less in a VM (docs/sandbox.md, Figures); otherwise glibc.
# A clean build takes 2-5 minutes on 2 cores (cargo shows its progress), --max-speed ~30 s more.
set -euo pipefail

prefix="${HOME}/.local"
libc=auto
profile=release
hook=no
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --glibc) libc=glibc; shift ;;
    --max-speed) profile=max-speed; shift ;;
    --hook) hook=yes; shift ;;
    --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -n "$binary" ]; then
  [ -x "$binary" ] || { echo "install.sh: --binary $binary is not an executable file" >&2; exit 1; }
  built=$binary
else
  if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo is not installed. Install Rust first (https://rustup.rs), then run ./install.sh again." >&2
    exit 1
  fi
  if ! command -v cc >/dev/null 2>&1; then
    echo "install.sh: no C compiler (cc). On Debian: sudo apt-get install -y build-essential" >&2
    exit 1
  fi

  # The musl build where its standard library and C compiler are installed (nothing is fetched for
  # it); glibc otherwise, or when asked.
  musl="$(uname -m)-unknown-linux-musl"
  target=""
  if [ "$libc" = auto ] && command -v musl-gcc >/dev/null 2>&1 &&
    [ -d "$(rustc --print sysroot)/lib/rustlib/$musl/lib" ]; then
    target=$musl
  fi
  out="${CARGO_TARGET_DIR:-$here/target}"
  target_args=()
  if [ -n "$target" ]; then
    echo "building shellgate ($profile, static, $target)…" >&2
    target_args=(--target "$target")
    out="$out/$target"
  else
    echo "building shellgate ($profile, glibc)…" >&2
    [ "$libc" = auto ] && echo "note: for the faster static build: rustup target add $musl; apt-get install musl-tools" >&2
  fi
  started=$SECONDS
  cargo build --profile "$profile" --locked "${target_args[@]}" --manifest-path "$here/Cargo.toml" >&2
  echo "built in $((SECONDS - started)) s" >&2
  built="$out/$profile/shellgate"
fi

bindir="$prefix/bin"
mkdir -p "$bindir"
install -m 0755 "$built" "$bindir/shellgate.new"
mv -f "$bindir/shellgate.new" "$bindir/shellgate"
echo "installed $bindir/shellgate" >&2

# Writes what `shellgate ARGS...` prints to FILE, replacing FILE only once it is complete.
generate() {
  local file=$1
  shift
  mkdir -p "$(dirname "$file")"
  "$bindir/shellgate" "$@" >"$file.new"
  chmod 0644 "$file.new"
  mv -f "$file.new" "$file"
  echo "installed $file" >&2
}
datadir="$prefix/share"
generate "$datadir/bash-completion/completions/shellgate" completions bash
generate "$datadir/zsh/site-functions/_shellgate" completions zsh
generate "$datadir/man/man1/shellgate.1" man

case ":$PATH:" in
  *":$bindir:"*) ;;
  *) echo "note: $bindir is not on your PATH yet (on Debian and Ubuntu the next login adds ~/.local/bin once it exists); the init line needs no PATH" >&2 ;;
esac

# The init line names the installed binary by its path (a login shell on Debian and Ubuntu reads
# ~/.bashrc before ~/.profile puts ~/.local/bin on PATH). --hook writes it; otherwise it is printed.
# A line it wrote earlier (it ends with "# shellgate") is replaced.
add_line() {
  local file=$1 line=$2
  touch "$file"
  if grep -v '  # shellgate$' "$file" | grep -q 'shellgate init '; then
    echo "note: $file already loads shellgate another way; left as it is (the line is below)" >&2
    return 0
  fi
  grep -v '  # shellgate$' "$file" >"$file.shellgate-new" || true
  printf '%s\n' "$line" >>"$file.shellgate-new"
  cat "$file.shellgate-new" >"$file"
  rm -f "$file.shellgate-new"
  echo "added the init line to $file" >&2
}
# (A path with other characters than letters, digits and /._+- gets no line: it says so.)
bash_line=$("$bindir/shellgate" init bash --startup-line) || bash_line=''
zsh_line=$("$bindir/shellgate" init zsh --startup-line) || zsh_line=''
zdot="${ZDOTDIR:-$HOME}"
if [ -z "$bash_line" ] || [ -z "$zsh_line" ]; then
  echo "install.sh: no init line for $bindir/shellgate; install to a plainer --prefix" >&2
  exit 1
fi
if [ "$hook" = yes ]; then
  add_line "$HOME/.bashrc" "$bash_line"
  if command -v zsh >/dev/null 2>&1; then
    add_line "$zdot/.zshrc" "$zsh_line"
    add_line "$zdot/.zshenv" "$zsh_line"
  fi
fi
cat >&2 <<NEXT
zsh completes from $datadir/zsh/site-functions once it is on fpath: in ~/.zshrc, before compinit,
  fpath=($datadir/zsh/site-functions \$fpath)
NEXT
if [ "$hook" != yes ]; then
  cat >&2 <<LINES
to gate your shells (./install.sh --hook does this), add at the end of ~/.bashrc:
$bash_line
and at the end of $zdot/.zshrc and $zdot/.zshenv:
$zsh_line
LINES
fi
cat >&2 <<NEXT
next (new shells load the hook; \`shellgate uninstall\` removes it all again):
  $bindir/shellgate doctor                  # what this machine can enforce
  $bindir/shellgate check -- 'rm -rf ~'     # decide a line without running it
NEXT
