#!/usr/bin/env python3
"""A scripted day of a person's own work in hooked bash and zsh: how often shellgate asks.

Issue 24's measure (friction budget: a person is asked about at most 2 % of the lines they type).
A new home gets the stock skeleton dotfiles (/etc/skel's .bashrc and .profile, Debian's), a prompt
that runs git (bash: __git_ps1 from git's own git-sh-prompt; zsh: a precmd that runs
`git rev-parse`), and the README's init line at the end, as install.sh --hook writes it. A small
project (a git repository with a Makefile, a Python module and its tests, a virtualenv-style
activate script, a .env) is the day's work. Each line is typed in a pseudo-terminal as a person
types it; every question shellgate asks is answered yes (the person wants the work done), and
each line's output and status are checked against what the line does without shellgate.

Reports, per shell and in total: lines typed, lines asked about (and questions), lines refused
(a shellgate refusal: `shellgate: not run`, `failed in the sandbox`), lines that misbehaved (the
check failed), and each asked, refused or misbehaving line.

Usage, as root (the shells run as USER, unprivileged, e.g. the one CI creates) or as that user:

    benches/person_day.py SHELLGATE_BIN [--user USER] [--verbose] [--tmux]

With --tmux each shell runs in a tmux pane (a server of its own, as USER) and is typed into with
`tmux send-keys`, as a person in tmux types; without it, in a pseudo-terminal of this process.

Network: none. No line reaches another machine (git's remote is a path on this machine).
"""

import os
import pty
import pwd
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

# The prompt ends with `[STATUS]Pn$ ` after whatever the skeleton and git add before it.
PROMPT = re.compile(rb"\[(\d+)\]P(\d+)\$ ")
QUESTION = re.compile(
    rb"Allow once\? \[y/N[^\n]*\(\d+ s\) "
    rb"|apply to this shell\? \[[yY]/[nN]\] "
    rb"|Type .full. to confirm[^\n]*\(\d+ s\) "
    rb"|Run this line without it\? \[y/N\] "
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]")
REFUSED = re.compile(r"shellgate: (not run|failed in the sandbox)")

# (line, regex its output must match, or None; expected status). The same day in both shells,
# but for the lines that are one shell's own.
COMMON = [
    ("cd ~/proj", None, 0),
    ("ls", r"Makefile", 0),
    ("git status --short", None, 0),
    ("git log --oneline -3", r"init", 0),
    ("git branch feature/parser", None, 0),
    ("git switch -q feature/parser", None, 0),
    ("cat calc.py", r"def add", 0),
    ("grep -n 'def ' calc.py", r"def add", 0),
    ("wc -l calc.py test_calc.py", r"total", 0),
    ("python3 -m unittest -q test_calc 2>&1 | tail -1", r"OK", 0),
    ("sed -i 's/return a + b/return b + a/' calc.py", None, 0),
    ("git diff --stat", r"calc.py", 0),
    ("make test", r"tests passed", 0),
    ("echo 'def sub(a, b):' >> calc.py", None, 0),
    ("echo '    return a - b' >> calc.py", None, 0),
    ("python3 -c 'import calc; print(calc.sub(9, 2))'", r"^7", 0),
    ("git add -A", None, 0),
    ("git commit -qm 'sub'", None, 0),
    ("git log --oneline | head -2", r"sub", 0),
    ("mkdir -p build/out", None, 0),
    ("cd build", None, 0),
    ("touch out/a.o out/b.o", None, 0),
    ("ls out | wc -l", r"^2", 0),
    ("cd ..", None, 0),
    ("pwd", r"/proj$", 0),
    ("export EDITOR=vim", None, 0),
    ("echo $EDITOR", r"^vim", 0),
    ("alias ll='ls -l'", None, 0),
    ("ll | head -2", r"total", 0),
    ("X=41; echo $((X+1))", r"^42", 0),
    ("for f in *.py; do echo \"== $f\"; done", r"== calc.py", 0),
    ("source .venv/bin/activate", None, 0),
    ("echo ${VIRTUAL_ENV##*/}", r"^\.venv", 0),
    ("deactivate", None, 0),
    ("echo ${VIRTUAL_ENV:-none}", r"^none", 0),
    ("find . -name '*.py' -not -path './.git/*' | sort", r"calc.py", 0),
    ("cp calc.py /tmp/calc-$USER.py", None, 0),
    ("diff -u calc.py /tmp/calc-$USER.py && echo same", r"same", 0),
    ("rm /tmp/calc-$USER.py", None, 0),
    ("tar czf /tmp/proj-$USER.tgz --exclude=.git .", None, 0),
    ("tar tzf /tmp/proj-$USER.tgz | grep -c '/calc.py$'", r"^1", 0),
    ("rm -f /tmp/proj-$USER.tgz", None, 0),
    ("echo hello | tr a-z A-Z", r"HELLO", 0),
    ("date +%Y > year.txt && cat year.txt", r"^20\d\d", 0),
    ("rm year.txt", None, 0),
    ("git stash list", None, 0),
    ("git switch -q master 2>/dev/null || git switch -q main", None, 0),
    ("git merge -q --no-edit feature/parser", None, 0),
    ("git push -q origin HEAD 2>&1 | tail -1", None, 0),
    ("git log --oneline origin/HEAD -1 2>/dev/null || git -C ~/remote.git log --oneline -1", r"sub", 0),
    ("ps -o comm= -p $$", None, 0),
    ("sleep 0.1", None, 0),
    ("history | tail -1", None, 0),
    ("echo done-$((6*7))", r"done-42", 0),
    ("cd ~", None, 0),
]
BASH_ONLY = [
    ("shopt -s globstar", None, 0),
    ("ls **/*.py | wc -l", r"^\d", 0),
    ("echo !!", None, 0),
    ("type ll", r"aliased", 0),
]
ZSH_ONLY = [
    ("setopt autocd", None, 0),
    ("print -l ~/proj/**/*.py(.N) | wc -l", r"^\s*\d", 0),
    ("whence -w ll", r"alias", 0),
    ("echo $ZSH_VERSION", r"^\d", 0),
]

ZSHRC = """\
autoload -Uz vcs_info 2>/dev/null
precmd() { __branch=$(git rev-parse --abbrev-ref HEAD 2>/dev/null); (( __prompts++ )); }
setopt prompt_subst
PS1='${__branch:+($__branch) }[%?]P${__prompts}$ '
HISTFILE=~/.zsh_history
HISTSIZE=1000
SAVEHIST=1000
"""

BASHRC_TAIL = """\
. /usr/lib/git-core/git-sh-prompt
GIT_PS1_SHOWDIRTYSTATE=1
PS1='\\u@\\h:\\w$(__git_ps1 " (%s)")[$?]P\\#$ '
"""


def readme_line(repo, shell):
    """The README's init line for SHELL (what install.sh --hook writes)."""
    start = f'eval "$("$HOME/.local/bin/shellgate" init {shell} '
    with open(os.path.join(repo, "README.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(start):
                return line.rstrip("\n")
    raise SystemExit(f"the README shows no init line for {shell}")


def make_home(root, binary, repo, uid, gid):
    home = os.path.join(root, "home")
    os.makedirs(root)
    proj = os.path.join(home, "proj")
    os.makedirs(os.path.join(home, ".local/bin"))
    os.makedirs(os.path.join(proj, ".venv/bin"))
    shutil.copy(binary, os.path.join(home, ".local/bin/shellgate"))
    for name in (".bashrc", ".profile"):
        shutil.copy(os.path.join("/etc/skel", name), os.path.join(home, name))
    with open(os.path.join(home, ".bashrc"), "a", encoding="utf-8") as f:
        f.write(BASHRC_TAIL + readme_line(repo, "bash") + "\n")
    with open(os.path.join(home, ".zshrc"), "w", encoding="utf-8") as f:
        f.write(ZSHRC + readme_line(repo, "zsh") + "\n")
    with open(os.path.join(home, ".zshenv"), "w", encoding="utf-8") as f:
        f.write(readme_line(repo, "zsh") + "\n")
    files = {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
        "Makefile": "test:\n\t@python3 -m unittest -q test_calc 2>/dev/null && echo tests passed\n",
        ".env": "APP_PORT=8080\n",
        ".gitignore": "build/\n__pycache__/\n",
        ".venv/bin/activate": 'deactivate () { PATH="$_OLD_PATH"; export PATH; unset VIRTUAL_ENV; '
        'unset -f deactivate; }\n_OLD_PATH="$PATH"\nVIRTUAL_ENV="$HOME/proj/.venv"\n'
        'export VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport PATH\n',
    }
    for name, text in files.items():
        with open(os.path.join(proj, name), "w", encoding="utf-8") as f:
            f.write(text)
    env = git_env(home)
    git = ["git", "-c", "user.name=Person", "-c", "user.email=person@example.invalid"]
    for argv, cwd in (
        (["git", "init", "-q", "--bare", "remote.git"], home),
        (["git", "init", "-q", "-b", "master"], proj),
        (["git", "add", "."], proj),
        (git + ["commit", "-qm", "init"], proj),
        (["git", "remote", "add", "origin", os.path.join(home, "remote.git")], proj),
        (["git", "push", "-q", "origin", "master"], proj),
        (["git", "config", "--global", "user.name", "Person"], home),
        (["git", "config", "--global", "user.email", "person@example.invalid"], home),
    ):
        subprocess.run(argv, cwd=cwd, env=env, check=True)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)
    os.chown(root, uid, gid)
    return home


def git_env(home):
    return {
        "HOME": home,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "xterm",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
    }


class Shell:
    def __init__(self, argv, env, cwd, verbose):
        self.verbose = verbose
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, {**env, "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"})
        self.buf = b""
        self.number = -1
        self.wait()

    def wait(self, timeout=120):
        """Up to the next prompt: (status, questions, output). Every question is answered y."""
        questions = []
        out = b""
        deadline = time.monotonic() + timeout
        while True:
            m = PROMPT.search(self.buf)
            q = QUESTION.search(self.buf)
            if q and (not m or q.start() < m.start()):
                out += self.buf[: q.end()]
                questions.append(self.buf[max(0, q.start() - 700) : q.end()])
                self.buf = self.buf[q.end() :]
                self.answer()
                continue
            if m and int(m.group(2)) > self.number:
                out += self.buf[: m.start()]
                self.buf = self.buf[m.end() :]
                self.number = int(m.group(2))
                return int(m.group(1)), questions, out
            if m:
                out += self.buf[: m.end()]
                self.buf = self.buf[m.end() :]
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"no prompt; the screen shows: {self.buf[-800:]!r}")
            self.read_more(left)

    def read_more(self, left):
        r, _, _ = select.select([self.fd], [], [], left)
        if r:
            try:
                self.buf += os.read(self.fd, 65536)
            except OSError:
                raise SystemExit(f"the shell ended: {self.buf[-800:]!r}")

    def answer(self):
        os.write(self.fd, b"y\r")

    def type(self, line):
        os.write(self.fd, line.encode() + b"\r")
        return self.wait()

    def close(self):
        os.write(self.fd, b"exit\r")
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class TmuxShell(Shell):
    """The same shell in a tmux pane (its own server, as USER): keys go in with `send-keys`, and
    what the shell writes comes back through `pipe-pane` into a file, read as the pty is."""

    def __init__(self, argv, env, cwd, verbose, user, scratch):
        self.verbose = verbose
        self.buf = b""
        self.number = -1
        self.socket = os.path.join(scratch, "tmux.sock")
        self.log = os.path.join(scratch, "pane.log")
        self.offset = 0
        entry = pwd.getpwnam(user)
        open(self.log, "wb").close()
        os.chown(scratch, entry.pw_uid, entry.pw_gid)
        os.chown(self.log, entry.pw_uid, entry.pw_gid)
        self.as_user = ["runuser", "-u", user, "--"] if os.geteuid() == 0 else []
        if argv[0] == "runuser":
            argv = argv[argv.index("--") + 1 :]
        else:
            argv = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv
        # The pane's program waits for one Enter, so that pipe-pane is attached before the shell
        # prints its first prompt; the shell gets tmux's own variables, as in any pane.
        start = [
            "sh",
            "-c",
            'read _ && cd "$0" && shift 2 && exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" "$@"',
            cwd,
        ] + argv
        self.tmux("new-session", "-d", "-s", "day", "-x", "200", "-y", "50", *start)
        self.tmux("pipe-pane", "-t", "day", "-o", f"cat >> '{self.log}'")
        self.tmux("send-keys", "-t", "day", "Enter")
        self.wait()

    def tmux(self, *args):
        subprocess.run(self.as_user + ["tmux", "-S", self.socket, *args], check=True)

    def read_more(self, left):
        time.sleep(min(left, 0.02))
        with open(self.log, "rb") as f:
            f.seek(self.offset)
            more = f.read()
        self.offset += len(more)
        self.buf += more

    def answer(self):
        self.tmux("send-keys", "-t", "day", "y", "Enter")

    def type(self, line):
        self.tmux("send-keys", "-t", "day", "-l", line)
        self.tmux("send-keys", "-t", "day", "Enter")
        return self.wait()

    def close(self):
        subprocess.run(
            self.as_user + ["tmux", "-S", self.socket, "kill-server"], stderr=subprocess.DEVNULL
        )


def day(shell, lines, home, user, verbose, tmux=False):
    env = git_env(home)
    env.update({"USER": user, "LOGNAME": user, "SHELL": f"/bin/{shell}"})
    argv = [shell, "-i"] if shell == "zsh" else [shell, "-l", "-i"]
    if os.geteuid() == 0:
        argv = ["runuser", "-u", user, "--", "env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv
    if tmux:
        scratch = tempfile.mkdtemp(prefix="tmux-", dir=os.path.dirname(home))
        sh = TmuxShell(argv, env, home, verbose, user, scratch)
    else:
        sh = Shell(argv, env, home, verbose)
    tally = {"lines": 0, "asked": 0, "questions": 0, "refused": 0, "misbehaved": 0}
    notes = []
    for line, want, code in lines:
        status, questions, out = sh.type(line)
        text = ANSI.sub("", out.decode(errors="replace").replace("\r", ""))
        # What the line printed: after the echo of the typed line, without shellgate's questions.
        printed = text.split("\n", 1)[1] if "\n" in text else ""
        tally["lines"] += 1
        tally["questions"] += len(questions)
        kinds = []
        if questions:
            tally["asked"] += 1
            kinds.append(f"asked {len(questions)}")
        if REFUSED.search(printed):
            tally["refused"] += 1
            kinds.append("refused")
        answer_lines = [l for l in printed.splitlines() if l.strip() and "shellgate" not in l]
        ok = status == code and (
            want is None or any(re.search(want, l.strip()) for l in answer_lines)
        )
        if not ok:
            tally["misbehaved"] += 1
            kinds.append(f"misbehaved (status {status})")
        if kinds:
            why = ""
            if questions:
                why = questions[0].decode(errors="replace").replace("\r", "")
                m = re.search(r"why:\s+(.*)", why)
                why = (m.group(1) if m else why.strip().splitlines()[-1])[:110]
            notes.append(f"  {shell}: {line!r}: {', '.join(kinds)}{': ' + why if why else ''}")
            if verbose:
                notes.append("    " + printed.strip().replace("\n", "\n    ")[-900:])
    sh.close()
    return tally, notes


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    binary = os.path.realpath(args[0])
    user = pwd.getpwuid(os.geteuid()).pw_name
    if "--user" in args:
        user = args[args.index("--user") + 1]
    verbose = "--verbose" in args
    if os.geteuid() == 0 and user == "root":
        raise SystemExit("as root, name the unprivileged user the shells run as: --user USER")
    entry = pwd.getpwnam(user)
    repo = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    # In the user's own home, as a person's projects are: a repository in a temp dir is one any
    # sandboxed line could have made, and shellgate trusts its config less (a push is asked).
    root = tempfile.mkdtemp(prefix="sg-day-", dir=entry.pw_dir)
    os.chmod(root, 0o755)
    try:
        shells = [("bash", COMMON + BASH_ONLY)] if "--zsh-only" not in args else []
        if shutil.which("zsh"):
            shells.append(("zsh", COMMON + ZSH_ONLY))
        if "--bash-only" in args:
            shells = shells[:1]
        total = {"lines": 0, "asked": 0, "questions": 0, "refused": 0, "misbehaved": 0}
        all_notes = []
        for shell, lines in shells:
            # A home of its own per shell: the same day's work, from the same start.
            home = make_home(os.path.join(root, shell), binary, repo, entry.pw_uid, entry.pw_gid)
            tally, notes = day(shell, lines, home, user, verbose, "--tmux" in args)
            all_notes += notes
            print(
                f"{shell}: lines {tally['lines']}, asked {tally['asked']} "
                f"({tally['questions']} questions), refused {tally['refused']}, "
                f"misbehaved {tally['misbehaved']}"
            )
            for k in total:
                total[k] += tally[k]
        print(
            f"total: lines {total['lines']}, asked {total['asked']} "
            f"({100 * total['asked'] / total['lines']:.1f} %; {total['questions']} questions), "
            f"refused {total['refused']}, misbehaved {total['misbehaved']}"
        )
        print("\n".join(all_notes))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
