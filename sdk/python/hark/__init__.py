"""Hark for Python agents: standard library only.

    from hark import Hark, confirm
    hark = Hark()                      # HARK_URL and HARK_TOKEN
    hark.send("build is green")
    if hark.ask("Deploy?", blocks=[confirm("go", "Deploy")], timeout=3600):
        ...
"""

from .blocks import (
    approval,
    choice,
    code,
    confirm,
    file,
    image,
    markdown,
    number_input,
    progress,
    text_input,
    toggle,
)
from ._http import Answer, Transport
from .client import MAX_WAIT, AskResult, Hark
from .errors import HarkError
from .wait import poll_until

__all__ = [
    "MAX_WAIT",
    "Answer",
    "AskResult",
    "Hark",
    "HarkError",
    "Transport",
    "approval",
    "choice",
    "code",
    "confirm",
    "file",
    "image",
    "markdown",
    "number_input",
    "poll_until",
    "progress",
    "text_input",
    "toggle",
]
__version__ = "0.1.0"
