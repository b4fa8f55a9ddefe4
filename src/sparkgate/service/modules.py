"""A session's modules: which are loaded, which are used and in what order.

The built-in modules are ``core`` (Spark's built-in functions, always there)
and ``hive`` (Hive's functions, which Spark's built-ins already hold): they add
no functions of their own and load and unload as Flink's do. A plug-in module's
functions (:class:`~sparkgate.api.modules.Module`) become the session's
temporary functions while it is used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from sparkgate.api.modules import MODULES_GROUP, Module, ModuleFactory

__all__ = [
    "BuiltinModule",
    "BuiltinModuleFactory",
    "ModuleError",
    "SessionModules",
    "load_module_factories",
]

log = logging.getLogger(__name__)


class ModuleError(ValueError):
    """A module statement that cannot be done; the message is Flink's."""


class BuiltinModule:
    """``core`` and ``hive``: functions Spark has built in."""

    def functions(self) -> Mapping[str, str]:
        return {}


class BuiltinModuleFactory:
    def create(self, options: Mapping[str, str]) -> Module:
        if options:
            raise ValueError(f"takes no options, not {', '.join(sorted(options))}")
        return BuiltinModule()


def load_module_factories() -> dict[str, ModuleFactory]:
    """Every module factory registered under ``sparkgate.modules``, by name."""
    found: dict[str, ModuleFactory] = {}
    for entry in entry_points(group=MODULES_GROUP):
        try:
            factory = entry.load()()
        except Exception:
            log.exception("Module %r (%s) failed to load", entry.name, entry.value)
            continue
        if isinstance(factory, ModuleFactory):
            found[entry.name] = factory
        else:
            log.error("Module %r (%s) is not a ModuleFactory", entry.name, entry.value)
    return found


#: Registers (name, class) as a temporary function, or drops name when class is None.
FunctionSetter = Callable[[str, "str | None"], None]


@dataclass
class SessionModules:
    """Loaded modules in load order; ``used`` the ones in use, in resolution order."""

    loaded: dict[str, Module] = field(default_factory=lambda: {"core": BuiltinModule()})
    used: list[str] = field(default_factory=lambda: ["core"])

    def load(
        self,
        name: str,
        options: Mapping[str, str],
        factories: Mapping[str, ModuleFactory],
        set_function: FunctionSetter,
    ) -> None:
        if name in self.loaded:
            raise ModuleError(f"A module with name '{name}' already exists")
        if "type" in options:
            raise ModuleError(
                f"Option 'type' = '{options['type']}' is not supported since module name is "
                "used to find module"
            )
        factory = factories.get(name)
        if factory is None:
            raise ModuleError(
                f"Could not find any factory for identifier '{name}' that implements "
                "'ModuleFactory'. Available factory identifiers are: "
                + ", ".join(sorted(factories))
            )
        try:
            module = factory.create(options)
        except ValueError as exc:
            raise ModuleError(f"Module '{name}' {exc}") from None
        before = self._functions()
        self.loaded[name] = module
        self.used.append(name)
        self._apply(set_function, before=before)

    def unload(self, name: str, set_function: FunctionSetter) -> None:
        if name not in self.loaded:
            raise ModuleError(f"No module with name '{name}' exists")
        before = self._functions()
        del self.loaded[name]
        if name in self.used:
            self.used.remove(name)
        self._apply(set_function, before=before)

    def use(self, names: list[str], set_function: FunctionSetter) -> None:
        for name in names:
            if names.count(name) > 1:
                raise ModuleError(f"Module '{name}' appears more than once")
            if name not in self.loaded:
                raise ModuleError(f"No module with name '{name}' exists")
        before = self._functions()
        self.used = list(names)
        self._apply(set_function, before=before)

    def rows(self) -> list[tuple[str, bool]]:
        """(name, used) of every loaded module: the used ones in their order first."""
        unused = [name for name in self.loaded if name not in self.used]
        return [(name, True) for name in self.used] + [(name, False) for name in unused]

    def _functions(self) -> dict[str, str]:
        """The function of each name, from the first used module that has it."""
        chosen: dict[str, str] = {}
        for name in reversed(self.used):
            chosen.update(self.loaded[name].functions())
        return chosen

    def _apply(self, set_function: FunctionSetter, before: dict[str, str]) -> None:
        now = self._functions()
        for function in before.keys() - now.keys():
            set_function(function, None)
        for function, implementation in now.items():
            if before.get(function) != implementation:
                set_function(function, implementation)
