"""`ArborChatMemory`: Arbor behind the memory interface LangChain-style chains call
(`memory_variables`, `load_memory_variables`, `save_context`, `clear`), with no dependency on
LangChain: a chain hands it the turn's inputs and outputs, and gets back what memory holds for
the next question as text for its prompt."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .client import Arbor


class ArborChatMemory:
    """Each exchange saved as the user's and the assistant's messages (the assistant's words wait
    for a person, as every assistant statement does); each new input answered with the compact
    pack's text under `memory_key`."""

    def __init__(
        self,
        client: Arbor,
        *,
        memory_key: str = "memory",
        input_key: Optional[str] = None,
        output_key: Optional[str] = None,
        max_tokens: int = 1000,
    ) -> None:
        self.client = client
        self.memory_key = memory_key
        self.input_key = input_key
        self.output_key = output_key
        self.max_tokens = max_tokens

    @property
    def memory_variables(self) -> List[str]:
        return [self.memory_key]

    @staticmethod
    def _pick(values: Dict[str, Any], key: Optional[str]) -> str:
        if key is not None:
            return str(values[key])
        if len(values) != 1:
            raise ValueError(f"several values ({', '.join(values)}); say which is the text with input_key/output_key")
        return str(next(iter(values.values())))

    def load_memory_variables(self, inputs: Dict[str, Any]) -> Dict[str, str]:
        pack = self.client.retrieve(self._pick(inputs, self.input_key), max_tokens=self.max_tokens)
        return {self.memory_key: pack["text"]}

    def save_context(self, inputs: Dict[str, Any], outputs: Dict[str, Any]) -> None:
        messages = [
            {"role": "user", "content": self._pick(inputs, self.input_key)},
            {"role": "assistant", "content": self._pick(outputs, self.output_key)},
        ]
        self.client.add_messages(messages)

    def clear(self) -> None:
        """Nothing: a chain's "clear" means a new conversation, not forgetting what memory
        holds. Forget a memory deliberately with `client.forget(id)`."""
