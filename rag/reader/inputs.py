"""Where each input of the reader's data recipe comes from, and the check that it is that file.

Two roots: ``shared`` (the read-only evaluation data, ``../shared/data``; licences in its README) and
``cache`` (``data/cache``, git-ignored: files brought here from public repositories, never committed).
A file with a recorded ``git_blob`` (the id git gives its content: sha1 of ``"blob <size>\\0" + bytes``)
or ``sha256``/``size`` is checked against them before use, so any copy of the official file, from any
repository, is accepted and any other version is refused.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from rag.reader.errors import InputChecksumError

KORQUAD_OFFICIAL_REPO = "korquad/korquad.github.io"


@dataclass(frozen=True)
class InputFile:
    """One input file of a source."""

    name: str               # e.g. korquad1/train
    root: str               # "shared" or "cache"
    path: str               # relative to its root
    licence: str
    origin: str = ""        # where it comes from, in words
    repo: str | None = None         # a public repository that holds it
    commit: str | None = None       # a commit of that repository where it is at ``repo_path``
    repo_path: str | None = None
    git_blob: str | None = None     # sha1 git object id of the content
    size: int | None = None
    sha256: str | None = None
    optional: bool = False          # a missing optional file is recorded, not an error


# KorQuAD 1.0, as published by its authors (https://korquad.github.io, repository korquad/korquad.github.io).
# The dev file's blob was brought here from that repository; the train file (38 MB, over what the public
# repository snapshots here carry) is identified by its git blob id at the repository's head, which other
# repositories' copies (JudePark96/BERT-KorQuAD-Competition rsc/data/, amy-hyunji/kobart_KorQuAD
# data/ver_1.0/train/) share byte for byte.
KORQUAD_LICENCE = "CC BY-ND 2.0 KR"
KORQUAD_TRAIN = InputFile(
    "korquad1/train", "cache", "korquad/KorQuAD_v1.0_train.json", KORQUAD_LICENCE,
    origin="KorQuAD 1.0 train (60,407 questions, 1,420 articles): dataset/KorQuAD_v1.0_train.json of "
           "korquad/korquad.github.io; any copy with the same git blob id",
    repo=KORQUAD_OFFICIAL_REPO, commit="0aaa4502fdeda7dc15dc7fb4c4bc3cb83ada4297",
    repo_path="dataset/KorQuAD_v1.0_train.json", git_blob="82e3c5939e5e61a1c4ae94e42676800e88ec52a6",
    optional=True)
KORQUAD_DEV = InputFile(
    "korquad1/dev", "cache", "korquad/KorQuAD_v1.0_dev.json", KORQUAD_LICENCE,
    origin="KorQuAD 1.0 dev (5,774 questions, 140 articles) with answer offsets; the same paragraphs and "
           "questions as ../shared/data/korquad1, which is used (answers located by search) when this is absent",
    repo=KORQUAD_OFFICIAL_REPO, commit="ce5e185aea759ff898673b29abd959978330ff47",
    repo_path="dataset/KorQuAD_v1.0_dev.json", git_blob="6849d8c79140447018f5701a0453835c96608a07",
    size=3_881_058, sha256="25ffeb51e6c51ec02c071b60a10188e10005c144110f0d876b26079d80a35bdf", optional=True)


def shared(name: str, path: str, licence: str, origin: str = "", optional: bool = False) -> InputFile:
    return InputFile(name, "shared", path, licence, origin=origin, optional=optional)


@dataclass(frozen=True)
class Locations:
    """The two roots the inputs are read from."""

    shared: Path
    cache: Path

    def resolve(self, f: InputFile) -> Path:
        return (self.shared if f.root == "shared" else self.cache) / f.path


@dataclass(frozen=True)
class InputRecord:
    """What the recipe read: the file, its size and hashes (the manifest lists these)."""

    name: str
    path: str
    size: int
    sha256: str
    git_blob: str
    licence: str
    origin: str
    repo: str | None
    commit: str | None
    repo_path: str | None


def file_hashes(path: Path) -> tuple[int, str, str]:
    """``(size, sha256 hex, git blob sha1 hex)`` of a file, read in blocks."""
    size = path.stat().st_size
    sha = hashlib.sha256()
    blob = hashlib.sha1(f"blob {size}\0".encode())
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
            blob.update(block)
    return size, sha.hexdigest(), blob.hexdigest()


def verify(f: InputFile, path: Path) -> InputRecord:
    """Hash ``path`` and check it against what ``f`` records; :class:`InputChecksumError` if it differs."""
    size, sha, blob = file_hashes(path)
    wrong = []
    if f.size is not None and size != f.size:
        wrong.append(f"size {size:,} (expected {f.size:,})")
    if f.sha256 is not None and sha != f.sha256:
        wrong.append(f"sha256 {sha} (expected {f.sha256})")
    if f.git_blob is not None and blob != f.git_blob:
        wrong.append(f"git blob {blob} (expected {f.git_blob})")
    if wrong:
        where = f" ({f.repo}@{f.commit[:10]}:{f.repo_path})" if f.repo and f.commit else ""
        raise InputChecksumError(f"{path}: not the file the recipe names as {f.name}{where}: " + ", ".join(wrong)
                                 + "; put the official file there or leave it out")
    return InputRecord(f.name, str(path), size, sha, blob, f.licence, f.origin, f.repo, f.commit, f.repo_path)
