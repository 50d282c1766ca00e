"""Users' files in: PDF, DOCX, HTML, HWPX, HWP 5, Markdown and text, read by content, each file on
its own (docs/documents.md)."""
from rag.documents.assemble import TextAssembler, clean, control_free
from rag.documents.detect import detect_format
from rag.documents.files import ExtractedFile, document_id, make_loader, read_file, to_document
from rag.documents.folder import (FileFailure, FileWarning, FolderLoad, LoadedFile, candidate_files, load_file,
                                  load_folder)
from rag.documents.manifest import MANIFEST_NAME, FileEntry, Manifest, load_manifest
from rag.documents.model import Block, Extracted, ExtractionWarning, Format, Loader, Page

__all__ = [
    "MANIFEST_NAME", "Block", "Extracted", "ExtractedFile", "ExtractionWarning", "FileEntry", "FileFailure",
    "FileWarning", "FolderLoad", "Format", "LoadedFile", "Loader", "Manifest", "Page", "TextAssembler",
    "candidate_files", "clean", "control_free", "detect_format", "document_id", "load_file", "load_folder",
    "load_manifest", "make_loader", "read_file", "to_document",
]
