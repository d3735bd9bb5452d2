"""Constructors for the common blocks (plain dicts; any dict with a ``type`` works too)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

Block = Dict[str, Any]


def _with(block: Block, extra: Dict[str, Any]) -> Block:
    block.update(extra)
    return {k: v for k, v in block.items() if v is not None}


def confirm(id: str, label: str, **extra: Any) -> Block:
    """A button; answering it confirms (the answer is ``True``)."""
    return _with({"type": "confirm", "id": id, "label": label}, extra)


def choice(id: str, options: Sequence[Union[str, Dict[str, Any]]], **extra: Any) -> Block:
    """Options as labels or dicts; ``multi=True`` answers a list."""
    opts = [{"label": o} if isinstance(o, str) else o for o in options]
    return _with({"type": "choice", "id": id, "options": opts}, extra)


def text_input(id: str, label: Optional[str] = None, **extra: Any) -> Block:
    return _with({"type": "text_input", "id": id, "label": label}, extra)


def number_input(id: str, label: Optional[str] = None, **extra: Any) -> Block:
    return _with({"type": "number_input", "id": id, "label": label}, extra)


def toggle(id: str, label: str, **extra: Any) -> Block:
    return _with({"type": "toggle", "id": id, "label": label}, extra)


def approval(id: str, tool: str, input: Any, **extra: Any) -> Block:
    """Asks to be allowed one action; the answer is ``{"decision": "allow"|"deny", ...}``."""
    return _with({"type": "approval", "id": id, "tool": tool, "input": input}, extra)


def markdown(text: str, **extra: Any) -> Block:
    return _with({"type": "markdown", "text": text}, extra)


def code(source: str, language: Optional[str] = None, **extra: Any) -> Block:
    return _with({"type": "code", "code": source, "language": language}, extra)


def progress(value: float, max: Optional[float] = None, label: Optional[str] = None,
             **extra: Any) -> Block:
    return _with({"type": "progress", "value": value, "max": max, "label": label}, extra)


def image(file_id: str, alt: Optional[str] = None, **extra: Any) -> Block:
    return _with({"type": "image", "file_id": file_id, "alt": alt}, extra)


def file(file_id: str, name: str, **extra: Any) -> Block:
    return _with({"type": "file", "file_id": file_id, "name": name}, extra)
