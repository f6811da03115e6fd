"""The call classifier: which catalog row (collective, group creation, query, ...) a call is.

A fact service shared by the facts builder and the rules: each call node is
classified once per walk, through the file's imports, the catalog, the
configured ``extra-collectives`` and the FSDP state-dict context the walk is
in (``with FSDP.state_dict_type(...):``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.bodies import FunctionScan
from ranklint.analysis.walk.catalog import CallSpec, lookup, lookup_method
from ranklint.analysis.walk.definitions import attribute_definitions, self_attribute
from ranklint.analysis.walk.names import NameTable, last_name
from ranklint.analysis.walk.targets import call_target
from ranklint.model.kinds import CallKind

_STATE_DICT_METHODS = frozenset({"state_dict", "optim_state_dict", "load_state_dict"})
_FSDP_STATE_DICT = CallSpec(
    "FullyShardedDataParallel.state_dict", CallKind.COLLECTIVE, methods=("state_dict",)
)


def is_state_dict_context(node: cst.BaseExpression) -> bool:
    """``FSDP.state_dict_type(...)``: ``state_dict()`` inside gathers across ranks."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "state_dict_type"
    )


class CallClassifier:
    """(catalog row, raw target) of the calls of one file; see the module docstring."""

    def __init__(
        self,
        names: NameTable,
        extra: dict[str, CallSpec],
        extra_methods: dict[str, CallSpec],
        scan: Callable[[], FunctionScan | None] = lambda: None,
        source: str = "",
        module: cst.Module | None = None,
    ) -> None:
        self.names = names
        self.extra = extra
        self.extra_methods = extra_methods
        # The function being walked, for rows that count only in some
        # configurations (see CallSpec.requires and CallSpec.sharded_only).
        self.scan = scan
        # The file's text: the configuration of calls outside any function.
        self.source = source
        # The file's module, for the objects its classes keep in attributes; its
        # `self.<x> = Class(...)` assignments, read at the first call that needs them.
        self.module = module if not source or _HOLDS_OBJECTS.search(source) else None
        self._attributes: dict[str, cst.BaseExpression] | None = None
        # Depth of `with FSDP.state_dict_type(...):` blocks around the walk.
        self.state_dict_contexts = 0
        # id(call node) -> classification; the nodes live as long as the walk.
        self._classified: dict[int, tuple[CallSpec | None, str | None]] = {}

    def classify(self, node: cst.Call) -> tuple[CallSpec | None, str | None]:
        """(catalog row, raw target) of a call; computed once per call node."""
        key = id(node)
        found = self._classified.get(key)
        if found is None:
            found = self._classified[key] = self._configured(node, *self._classify(node))
        return found

    def peek(self, node: cst.Call) -> tuple[CallSpec | None, str | None]:
        """``classify`` for a call the walk has not reached yet (a look-ahead):
        not cached, since the names it resolves may be bound between here and
        there (`model = DDP(net)`, then `model(x)`)."""
        found = self._classified.get(id(node))
        return found if found is not None else self._configured(node, *self._classify(node))

    def configured(self, spec: CallSpec) -> bool:
        """Whether the configuration ``spec`` requires (CallSpec.requires) shows in the
        text it is read from: the file's, or that of the function being walked."""
        if spec.requires is None:
            return True
        scan = self.scan()
        text = self.source if scan is None or spec.requires_file else scan.text
        return re.search(spec.requires, text) is not None

    def _configured(
        self, node: cst.Call, spec: CallSpec | None, target: str | None
    ) -> tuple[CallSpec | None, str | None]:
        """Drop a row whose call does not communicate as this file uses it."""
        if spec is None or (not spec.requires and not spec.sharded_only):
            return spec, target
        if not self.configured(spec):
            return None, target
        scan = self.scan()
        if scan is not None and spec.sharded_only and scan.sharded_later(node):
            return None, target
        return spec, target

    def _classify(self, node: cst.Call) -> tuple[CallSpec | None, str | None]:
        func = node.func
        names = self.names
        qualified = names.resolve(func)
        if qualified is not None:
            spec = lookup(qualified) or self.extra.get(qualified)
            if spec is not None:
                return spec, qualified
        target = call_target(func, names)
        if qualified is None:
            held = self._held_object_call(func)
            if held is not None:
                return held
        if isinstance(func, cst.Attribute) and (qualified is None or spec is None):
            method = func.attr.value
            receiver = last_name(func.value)
            if self.state_dict_contexts and method in _STATE_DICT_METHODS and qualified is None:
                return _FSDP_STATE_DICT, target
            if target is None or not target.startswith("@self:"):
                spec = lookup_method(method, receiver) or self.extra_methods.get(method)
                if spec is not None and qualified is None:
                    return spec, target
            elif method in self.extra_methods:
                return self.extra_methods[method], target
            else:
                # Framework methods inherited by user classes (a LightningModule's
                # `self.all_gather`): catalog rows that name `self` as a receiver.
                spec = lookup_method(method, receiver)
                if spec is not None and "self" in spec.receivers:
                    return spec, target
        if target is not None and not target.startswith("@") and qualified is None:
            # A method of an object built from a known class (`model = FSDP(m)`).
            spec = lookup(target)
            if spec is not None:
                return spec, target
        if target is not None and target.startswith("@local:"):
            spec = self.extra.get(target[len("@local:") :])
            if spec is not None:
                return spec, target
        return None, target

    def _held_object_call(self, func: cst.BaseExpression) -> tuple[CallSpec, str] | None:
        """(row, target) of ``self.<x>.method(...)`` or ``self.<x>(...)`` where
        ``self.<x>`` holds an object of a catalogued class (see held_class)."""
        method = "__call__"
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
            method, func = func.attr.value, func.value
        built = self.held_class(func)
        if built is None:
            return None
        target = f"{built}.{method}"
        spec = lookup(target)
        return None if spec is None else (spec, target)

    def held_class(self, node: cst.BaseExpression) -> str | None:
        """The class of the object ``self.<x>`` holds, where the module's methods
        assign it once and build an object of a library class (``self.fid =
        FrechetInceptionDistance()``, ``self.model = DDP(net)``); ``@local:Class``
        for a class of this project; None otherwise."""
        attribute = self_attribute(node)
        if self.module is None or attribute is None:
            return None
        if self._attributes is None:
            self._attributes = attribute_definitions(self.module)
        # A class of this project comes back as `@local:Class`: no catalog row
        # names one, so its methods are left to the call graph.
        return self.names.built_class(self._attributes.get(attribute))


# The text of a file whose classes may keep a catalogued object in an attribute.
_HOLDS_OBJECTS = re.compile(r"torchmetrics|DataParallel|FSDP|\.prepare\(")
