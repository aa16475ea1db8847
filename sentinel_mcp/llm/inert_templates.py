"""llama-cpp-python's ``Llama()`` compiles every chat template in the file's metadata: not in this process.

``Llama.__init__`` builds a ``Jinja2ChatFormatter`` for ``tokenizer.chat_template`` and each
``tokenizer.chat_template.<name>``, and Jinja folds constants while compiling: a file whose template holds
``{{ 'a' * 10**9 }}`` built a gigabyte in the gateway at load (``10 ** 10 ** 8``: minutes of CPU), before any
bound of ours could run. ``install()`` puts a stand-in for llama-cpp's chat-format module into its ``llama``
module, the same in all but that formatter: it keeps the template text and compiles nothing. The gateway
renders templates only through ``template_process`` (a bounded child); a ``create_chat_completion`` that would
use a file's template is refused.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any

from sentinel_mcp.llm.errors import LlmError

_LOCK = threading.Lock()


class UnboundedTemplateRefused(LlmError):
    """Something asked llama-cpp-python to render a model file's chat template in this process."""


class _UncompiledFormatter:
    def __init__(self, template: str, eos_token: str, bos_token: str, **_: Any) -> None:
        self.template, self.eos_token, self.bos_token = template, eos_token, bos_token

    def to_chat_handler(self) -> Any:
        def refuse(*_: Any, **__: Any) -> Any:
            raise UnboundedTemplateRefused(
                "the model file's chat template is rendered only in Sentinel's bounded process "
                "(sentinel_mcp.llm.prompt_format.render_prompt), not by llama-cpp-python"
            )

        return refuse


class _InertChatFormats(ModuleType):
    """llama_cpp.llama_chat_format, but for the formatter of a file's template."""

    def __init__(self, real: ModuleType) -> None:
        super().__init__(real.__name__)
        self._real = real
        self.Jinja2ChatFormatter = _UncompiledFormatter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def install() -> None:
    """Make every later ``Llama()`` in this process leave its file's templates uncompiled (idempotent)."""
    import llama_cpp.llama as llama_module

    with _LOCK:
        if not isinstance(llama_module.llama_chat_format, _InertChatFormats):
            llama_module.llama_chat_format = _InertChatFormats(llama_module.llama_chat_format)
