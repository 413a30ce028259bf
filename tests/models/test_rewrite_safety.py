"""``bcast rewrite``'s files: never the input, never an existing file without --force, atomic
(a temp file in the output's folder, then os.replace), nothing left behind when it fails or is
interrupted (an exception, Ctrl-C, SIGTERM to the process mid-write)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

from support.cli import run_cli

onnx = pytest.importorskip("onnx")

import bcast  # noqa: E402
from bcast.models import onnx_model as models  # noqa: E402
from bcast.core.errors import InputError  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")


def _one_line_exit_2(*argv) -> str:
    code, _, err = run_cli(*argv)
    assert code == 2 and err.count("\n") == 1 and err.startswith("bcast rewrite: error: "), (code, err)
    return err


def test_never_the_input(saved, tmp_path):
    (tmp_path / "link.onnx").symlink_to(saved)
    os.link(saved, tmp_path / "hard.onnx")
    data = saved.read_bytes()
    for out in (saved, tmp_path / "link.onnx", tmp_path / "hard.onnx", tmp_path / "." / "m.onnx"):
        assert "is the input model" in _one_line_exit_2("rewrite", str(saved), "--target", "ncnn", "-o", str(out),
                                                        "--force")
    assert saved.read_bytes() == data


def test_existing_file_only_with_force_and_never_through_a_symlink(saved, tmp_path):
    other = tmp_path / "other.onnx"
    other.write_bytes(b"keep")
    assert "exists" in _one_line_exit_2("rewrite", str(saved), "--target", "ncnn", "-o", str(other))
    assert other.read_bytes() == b"keep"
    link = tmp_path / "link.onnx"
    link.symlink_to(other)
    assert run_cli("rewrite", str(saved), "--target", "ncnn", "-o", str(link), "--force")[0] == 0
    assert other.read_bytes() == b"keep" and not link.is_symlink()  # the link is replaced, not its target
    assert bcast.lint(str(link), "ncnn") == []


def test_output_mode_follows_the_umask(saved, tmp_path):
    """Was: mkstemp's 0600, a model other users could not read."""
    mask = os.umask(0o022)
    try:
        bcast.rewrite(str(saved), "ncnn", str(tmp_path / "out.onnx"))
    finally:
        os.umask(mask)
    assert (tmp_path / "out.onnx").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("out, match", [
    ("no/such/folder/out.onnx", "does not exist"),
    (".", "is a folder, not a file"),
    ("/proc/out.onnx", "cannot write it"),  # the folder exists, nothing can be made in it (even as root)
])
def test_bad_outputs_are_one_line(saved, tmp_path, monkeypatch, out, match):
    monkeypatch.chdir(tmp_path)
    assert match in _one_line_exit_2("rewrite", str(saved), "--target", "ncnn", "-o", out)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def _failing(monkeypatch, where, error):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(where[0], where[1], fail)


FAILURES = {
    # was: PermissionError, a traceback (mkstemp outside the try); root writes anywhere, so the OS is asked to say no
    "unwritable folder": ((tempfile, "mkstemp"), PermissionError(13, "Permission denied"),
                          "cannot write it (Permission denied)"),
    "disk full": ((os, "fsync"), OSError(28, "No space left on device"), "cannot write it (No space left on device)"),
    "rename fails": ((os, "replace"), OSError(18, "Invalid cross-device link"), "cannot write it"),
}


@pytest.mark.parametrize("name", list(FAILURES))
def test_failures_leave_nothing(saved, tmp_path, monkeypatch, name):
    where, error, match = FAILURES[name]
    out = tmp_path / "out.onnx"
    out.write_bytes(b"old")
    _failing(monkeypatch, where, error)
    assert match in _one_line_exit_2("rewrite", str(saved), "--target", "ncnn", "-o", str(out), "--force")
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "out.onnx"] and out.read_bytes() == b"old"


def test_serialization_failure_leaves_nothing(tmp_path):
    class TooBig:
        def SerializeToString(self):
            raise ValueError("Message onnx.ModelProto exceeds maximum protobuf size of 2GB")

    with pytest.raises(InputError, match="cannot serialize the model"):
        models.save_atomic(TooBig(), tmp_path / "out.onnx")
    assert os.listdir(tmp_path) == []


def test_keyboard_interrupt_during_the_write(saved, tmp_path, monkeypatch):
    _failing(monkeypatch, (os, "fsync"), KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        bcast.rewrite(str(saved), "ncnn", str(tmp_path / "out.onnx"))
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]
    assert run_cli("rewrite", str(saved), "--target", "ncnn", "-o", str(tmp_path / "out.onnx"))[0] == 130
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


#: Runs ``bcast rewrite`` with the write held open (after the temp file has its bytes, before the rename)
#: until the test sends a signal; prints the exit status.
_HELD = textwrap.dedent("""
    import os, sys, time
    from bcast import cli
    def held(fd):
        print("writing", flush=True)
        time.sleep(30)
    os.fsync = held
    sys.exit(cli.main(sys.argv[1:]))
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_mid_write_leaves_nothing(saved, tmp_path, sig):
    out = tmp_path / "out.onnx"
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-c", _HELD, "rewrite", str(saved), "--target", "ncnn", "-o", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert p.stdout.readline() == "writing\n"
        assert any(f.endswith(".tmp") for f in os.listdir(tmp_path))  # the temp file is there, mid-write
        p.send_signal(sig)
        _, err = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 128 + sig and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_sigterm_handler_is_restored():
    before = signal.getsignal(signal.SIGTERM)
    run_cli("rules")
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_long_legal_output_name(saved, tmp_path):
    # 249 characters is a legal name (255 bytes is the limit): the temp file beside it must not be longer
    out = tmp_path / ("o" * 244 + ".onnx")
    assert len(out.name) == 249
    assert run_cli("rewrite", str(saved), "--target", "ncnn", "-o", str(out))[0] == 0
    assert bcast.lint(str(out), "ncnn") == [] and sorted(os.listdir(tmp_path)) == sorted(["m.onnx", out.name])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_force_never_replaces_what_is_not_a_regular_file(saved, tmp_path):
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    err = _one_line_exit_2("rewrite", str(saved), "--target", "ncnn", "-o", str(fifo), "--force")
    assert "not a regular file" in err
    assert fifo.is_fifo() and sorted(os.listdir(tmp_path)) == ["m.onnx", "pipe.onnx"]
    with pytest.raises(InputError, match="not a regular file"):
        models.save_atomic(models.load(str(saved)), os.devnull, force=True)
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)
