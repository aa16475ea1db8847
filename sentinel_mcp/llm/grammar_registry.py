"""The shipped grammars: loaded and syntax-checked at start-up, each paired with its output model.

A broken grammar file fails start-up with its file name and the error. Once a model is loaded, the
engine compiles every grammar with llama.cpp itself (``native_check``), because only llama.cpp's
parser is authoritative and a NULL grammar sampler would crash generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.llm.errors import GrammarError
from sentinel_mcp.llm.gbnf_syntax import GbnfSyntaxError, check_gbnf
from sentinel_mcp.llm.output_models import GRAMMAR_MODELS
from sentinel_mcp.paths import GRAMMARS_DIR

NAME_SHOWN = 80  # characters of an unknown grammar's name echoed in the error


@dataclass(frozen=True)
class NamedGrammar:
    name: str
    path: Path | None  # None for grammars made at run time (from a JSON Schema)
    text: str
    model: type[BaseModel] | None  # the pydantic model its output must satisfy, when it has one


class GrammarRegistry:
    def __init__(self, grammars: dict[str, NamedGrammar]) -> None:
        self._grammars = grammars

    @classmethod
    def load(cls, directory: Path = GRAMMARS_DIR, *, require_models: bool = True) -> GrammarRegistry:
        """Read and check every ``*.gbnf`` in ``directory``; raise GrammarError naming the bad file."""
        if not directory.is_dir():
            raise GrammarError(f"grammar directory {directory} does not exist")
        grammars: dict[str, NamedGrammar] = {}
        for path in sorted(directory.glob("*.gbnf")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise GrammarError(f"grammar {path.name}: cannot read it: {exc}") from None
            try:
                check_gbnf(text)
            except GbnfSyntaxError as exc:
                raise GrammarError(f"grammar {path}: {exc}") from None
            grammars[path.stem] = NamedGrammar(path.stem, path, text, GRAMMAR_MODELS.get(path.stem))
        if require_models:
            missing = sorted(set(GRAMMAR_MODELS) - set(grammars))
            if missing:
                raise GrammarError(
                    f"grammar directory {directory} lacks {', '.join(m + '.gbnf' for m in missing)}"
                )
        return cls(grammars)

    def names(self) -> list[str]:
        return sorted(self._grammars)

    def get(self, name: str) -> NamedGrammar:
        try:
            return self._grammars[name]
        except KeyError:
            # the name is the caller's: shown cut short, its hidden characters made visible
            raise GrammarError(
                compose("unknown grammar '", safe_text(name, NAME_SHOWN), "'; known grammars: ",
                        ", ".join(self.names()))
            ) from None

    def __iter__(self):
        return iter(self._grammars.values())
