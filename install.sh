#!/usr/bin/env bash
# Build shellgate in release mode; install the binary, its shell completions and its manual page.
#
#   ./install.sh                 # installs ~/.local/bin/shellgate (and ~/.local/share/...)
#   ./install.sh --prefix /usr/local   # installs /usr/local/bin/shellgate (and /usr/local/share/...)
#   ./install.sh --glibc         # links against glibc even where the musl build is possible
#   ./install.sh --max-speed     # whole-program LTO: ~0.3 ms quicker per line, 20-30 s longer build
#
# Needs Rust (cargo, 1.88 or newer) and a C compiler (the shell grammars are C). Nothing is
# downloaded except crates by cargo. Where Rust's musl target and musl-gcc are installed
# (rustup target add x86_64-unknown-linux-musl; apt-get install musl-tools), the binary is static
# musl: a `run` line costs ~0.44 ms less in a VM (docs/sandbox.md, Figures); otherwise glibc.
# A clean build takes ~2 minutes on 2 cores (cargo shows its progress), --max-speed ~2.5.
set -euo pipefail

prefix="${HOME}/.local"
libc=auto
profile=release
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --glibc) libc=glibc; shift ;;
    --max-speed) profile=max-speed; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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
  *) echo "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" >&2 ;;
esac
cat >&2 <<NEXT
zsh completes from $datadir/zsh/site-functions once it is on fpath: in ~/.zshrc, before compinit,
  fpath=($datadir/zsh/site-functions \$fpath)
next:
  $bindir/shellgate doctor                  # what this machine can enforce
  $bindir/shellgate check -- 'rm -rf ~'     # decide a line without running it
NEXT
