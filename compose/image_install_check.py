"""Perform compose/Dockerfile's install without Docker, then run its CMD and HEALTHCHECK.

    python3.11 compose/image_install_check.py [--dockerfile compose/Dockerfile] [--python P]

Reads the Dockerfile and, in a fresh temporary directory:

1. stages the files its ``COPY`` lines take from the build context (the repository root),
   laid out under its ``WORKDIR`` as the image would have them;
2. creates a clean venv with the Python the ``FROM`` line names and runs the Dockerfile's
   ``pip install --no-cache-dir .`` there;
3. from outside the source tree: ``kcoord --help`` and ``import wire, coordinator, storage``;
4. starts the image's ``CMD`` (on 127.0.0.1, a free port and a temporary data directory
   instead of 0.0.0.0, 9092 and /data), waits for ``kcoord listening on``, runs the
   ``HEALTHCHECK`` command (same substitutions) until it exits 0, then stops the server with
   the ``STOPSIGNAL`` and expects exit status 0.

Exit 0 when all of that works; otherwise 1 with the reason on stderr. Stdlib only. Used by
.ci/validate_compose.sh, so a broken image install is caught on machines without Docker.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", "*.egg-info")
INSTALL = "pip install --no-cache-dir ."


class CheckFailed(Exception):
    """The install or the run does not work (the message says why)."""


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in dockerfile.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    if pending:
        raise CheckFailed(f"{dockerfile}: dangling line continuation")
    return result


def exec_form(text: str, what: str) -> list[str]:
    """The JSON (exec) form of CMD/HEALTHCHECK CMD as a list; refuses the shell form."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise CheckFailed(f"{what} is not in exec (JSON) form: {text}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckFailed(f"{what} is not a JSON list of strings: {text}")
    return value


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def substitute(argv: list[str], port: int, data_dir: Path) -> list[str]:
    mapping = {"0.0.0.0": "127.0.0.1", "9092": str(port), "/data": str(data_dir)}
    out = []
    for arg in argv:
        arg = mapping.get(arg, arg)
        out.append(arg.replace("127.0.0.1:9092", f"127.0.0.1:{port}"))
    return out


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        raise CheckFailed(f"`{shlex.join(argv)}` exited {done.returncode}:\n" + "\n".join(tail))
    return done.stdout


def stage(steps: list[tuple[str, str]], work: Path) -> Path:
    """Copy what the COPY lines take into ``work``/image; returns the WORKDIR of the install."""
    image = work / "image"
    workdir = Path("/")
    install_dir: Path | None = None
    for word, args in steps:
        if word == "WORKDIR":
            workdir = workdir / args
        elif word == "COPY":
            parts = shlex.split(args)
            if any(p.startswith("--from") for p in parts):
                continue
            parts = [p for p in parts if not p.startswith("--")]
            *sources, dest = parts
            target = image / (workdir / dest).relative_to("/")
            for source in sources:
                origin = ROOT / source
                if not origin.exists():
                    raise CheckFailed(f"COPY {source}: not in the build context")
                if origin.is_dir():
                    shutil.copytree(origin, target, ignore=IGNORED, dirs_exist_ok=True)
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(origin, target / origin.name)
        elif word == "RUN" and INSTALL in args:
            install_dir = image / workdir.relative_to("/")
    if install_dir is None:
        raise CheckFailed(f"no RUN with `{INSTALL}`")
    return install_dir


def serve_and_probe(
    cmd: list[str], health: list[str], stop: signal.Signals, env: dict[str, str], work: Path
) -> None:
    port = free_port()
    data = work / "data"
    data.mkdir()
    cmd = substitute(cmd, port, data)
    health = substitute(health, port, data)
    print(f"  CMD: {shlex.join(cmd)}", flush=True)
    with subprocess.Popen(
        cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            assert server.stdout is not None and server.stderr is not None
            line = server.stdout.readline().strip()
            if not line.startswith("kcoord listening on "):
                server.kill()
                raise CheckFailed(f"CMD did not start: {line!r} {server.stderr.read()[-2000:]}")
            print(f"  {line}", flush=True)
            print(f"  HEALTHCHECK: {shlex.join(health)}", flush=True)
            deadline = time.monotonic() + 30
            while True:
                probe = subprocess.run(
                    health, cwd=work, env=env, capture_output=True, text=True, timeout=60
                )
                if probe.returncode == 0:
                    break
                if probe.returncode == 2 or time.monotonic() > deadline:  # 2: usage error
                    raise CheckFailed(
                        f"HEALTHCHECK exited {probe.returncode}: {probe.stderr.strip()}"
                    )
                time.sleep(1)
            server.send_signal(stop)
            status = server.wait(timeout=15)
            if status != 0:
                raise CheckFailed(f"CMD exited {status} after {stop.name}")
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()


def check(dockerfile: Path, python: str) -> None:
    steps = instructions(dockerfile)
    froms = [args for word, args in steps if word == "FROM"]
    if len(froms) != 1:
        raise CheckFailed(f"expected one FROM, found {len(froms)}")
    wanted = re.match(r"python:(\d+\.\d+)", froms[0])
    if wanted is None:
        raise CheckFailed(f"FROM {froms[0]}: not a python image")
    last = {word: args for word, args in steps}
    if "CMD" not in last or "HEALTHCHECK" not in last:
        raise CheckFailed("CMD and HEALTHCHECK are both required")
    cmd = exec_form(last["CMD"], "CMD")
    health_words = shlex.split(last["HEALTHCHECK"])
    if "CMD" not in health_words:
        raise CheckFailed(f"HEALTHCHECK without CMD: {last['HEALTHCHECK']}")
    health = exec_form(last["HEALTHCHECK"].split("CMD", 1)[1].strip(), "HEALTHCHECK CMD")
    stop = signal.Signals[last.get("STOPSIGNAL", "SIGTERM")]

    with tempfile.TemporaryDirectory(prefix="kcoord-image-") as tmp:
        work = Path(tmp)
        install_dir = stage(steps, work)
        print(f"  staged COPY sources under {install_dir}", flush=True)
        venv = work / "venv"
        run([python, "-m", "venv", str(venv)], dict(os.environ), work)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}
        }
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        version = run(
            ["python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], env, work
        )
        if version.strip() != wanted.group(1):
            raise CheckFailed(f"FROM wants Python {wanted.group(1)}, {python} is {version.strip()}")
        print(f"  clean venv (Python {version.strip()}): {INSTALL}", flush=True)
        run(INSTALL.split(), env, install_dir)
        shutil.rmtree(work / "image")  # the install must not need its sources
        run(["kcoord", "--help"], env, work, timeout=60)
        run(["python", "-c", "import wire, coordinator, storage, coordinator.ping"], env, work)
        serve_and_probe(cmd, health, stop, env, work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dockerfile", type=Path, default=ROOT / "compose" / "Dockerfile")
    parser.add_argument(
        "--python", default=None, help="interpreter for the venv (default: python3.X of FROM)"
    )
    args = parser.parse_args(argv)
    python = args.python
    if python is None:
        match = re.search(r"^FROM\s+python:(\d+\.\d+)", args.dockerfile.read_text(), re.M)
        python = f"python{match.group(1)}" if match else "python3"
    if shutil.which(python) is None:
        print(f"image install check: {python} not found (the Dockerfile's FROM)", file=sys.stderr)
        return 1
    try:
        check(args.dockerfile, python)
    except (CheckFailed, subprocess.TimeoutExpired) as exc:
        print(f"image install check: {exc}", file=sys.stderr)
        return 1
    print("image install check: ok", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
