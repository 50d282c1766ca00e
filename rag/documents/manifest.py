"""The sidecar manifest of a folder: ids, versions, titles, URIs, metadata and access per file.

``rag-manifest.yaml`` at the folder's root (docs/documents.md#the-manifest)::

    defaults:                      # every file, before its own entry
      metadata: {department: hr}
      access: {groups: [staff]}
    files:
      근로기준법.pdf:              # a path relative to the folder (posix), or a glob
        id: labor-standards-act
        version: "2026-01-02"
        title: 근로기준법
        uri: https://www.law.go.kr/법령/근로기준법
        metadata: {kind: statute}
        access: {groups: [hr], tenant: acme}
        trusted: true              # never quarantined as a prompt injection
      "drafts/*": {exclude: true}

A file's settings are the defaults, then every matching glob in the order written, then its exact
entry; ``metadata`` and ``access`` merge key by key, the rest is replaced. A glob may not set
``id`` (two files would share it). Anything the manifest does not say comes from the file itself
(front matter, PDF / DOCX properties, HTML title) and then from the defaults of
:func:`rag.documents.files.to_document`.
"""
from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.errors import InputError

MANIFEST_NAME = "rag-manifest.yaml"
_GLOB = set("*?[")


class FileEntry(BaseModel):
    """What the manifest says about one file (or a glob of files)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(None, min_length=1)
    version: str | None = Field(None, min_length=1, pattern=r"^[^:]+$")
    title: str | None = None
    uri: str | None = None
    metadata: dict[str, Any] = {}
    access: dict[str, Any] | None = None
    exclude: bool = False
    trusted: bool = False  # never quarantined (docs/security.md); recorded as metadata trusted: true

    def fingerprint(self) -> str:
        """A short hash of these settings: a sync re-reads a file whose entry changed (an entry
        that does not trust its file hashes as it did before ``trusted`` existed)."""
        import hashlib

        dumped = self.model_dump_json(exclude=None if self.trusted else {"trusted"})
        return hashlib.sha256(dumped.encode("utf-8")).hexdigest()[:16]


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    defaults: FileEntry = FileEntry()
    files: dict[str, FileEntry] = {}

    def entry_for(self, rel: str) -> FileEntry:
        """The merged settings of the file at ``rel`` (posix path relative to the folder)."""
        merged: dict[str, Any] = self.defaults.model_dump()
        exact = self.files.get(rel)
        for pattern, entry in self.files.items():
            if _GLOB & set(pattern) and fnmatch.fnmatchcase(rel, pattern):
                merged = _merge(merged, entry)
        if exact is not None:
            merged = _merge(merged, exact)
        return FileEntry.model_validate(merged)

    def missing(self, present: set[str]) -> list[str]:
        """Exact entries naming no file in the folder (a typo the user should hear about)."""
        return sorted(k for k in self.files if not (_GLOB & set(k)) and k not in present)


def _merge(base: dict[str, Any], entry: FileEntry) -> dict[str, Any]:
    out = dict(base)
    for key in entry.model_fields_set:
        value = getattr(entry, key)
        if key in ("metadata", "access") and isinstance(value, Mapping):
            out[key] = {**(out.get(key) or {}), **value}
        else:
            out[key] = value
    return out


def load_manifest(root: Path) -> Manifest:
    """The folder's manifest, or an empty one when it has none. A malformed manifest is an
    :class:`InputError` naming the file and the bad key (nothing is indexed from a folder whose
    manifest cannot be read: its access rules might be lost)."""
    import yaml

    path = root / MANIFEST_NAME
    if not path.is_file():
        return Manifest()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid UTF-8 YAML ({exc}); fix the manifest and run again") from None
    try:
        manifest = Manifest.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'manifest'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"{path}: {problems}") from None
    for pattern, entry in manifest.files.items():
        if _GLOB & set(pattern) and entry.id is not None:
            raise InputError(f"{path}: files.{pattern}: a glob may not set 'id' (every file it matches would "
                             "share it); give each file its own entry")
    return manifest
