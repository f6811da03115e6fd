"""Collectives that frameworks issue implicitly, recognised from how the code reads.

Catalog rows cover calls (`trainer.save_checkpoint()`); these helpers cover
the two forms a call table cannot: Lightning's ``self.log(...)`` and
``self.log_dict(...)``, collective only with ``sync_dist=True``, and
*properties* whose read is a collective (``trainer.log_dir``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.catalog import (
    FULLY_SHARD,
    HOOK_ONLY_PROPERTIES,
    REMOVED_LIGHTNING_HOOKS,
    WRAPPER_GROUP_KEYWORDS,
    CallSpec,
    lookup_property,
)
from ranklint.analysis.walk.names import NameTable, last_name
from ranklint.model.events import FunctionSummary, ModuleSummary

# Receivers of Lightning's `log` / `log_dict`: the module itself.
_LIGHTNING_MODULES = frozenset({"self", "pl_module", "module", "lightning_module", "model"})


@dataclass(frozen=True)
class SyncedLog:
    """A ``log``/``log_dict`` call that all-reduces: once, or once per key of ``keys``."""

    method: str
    keys: cst.BaseExpression | None


def synced_log(node: cst.Call) -> SyncedLog | None:
    """Lightning's ``self.log(..., sync_dist=True)``: one all-reduce per logged value.

    ``log_dict`` all-reduces once per key, so its first argument is returned
    as the thing iterated: a dict whose keys depend on the rank makes the
    ranks issue different numbers of collectives (Lightning#7129).
    """
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("log", "log_dict"):
        return None
    if last_name(func.value) not in _LIGHTNING_MODULES:
        return None
    # `sync_dist` follows seven other parameters: it is passed by keyword.
    synced = next(
        (arg.value for arg in node.args if arg.keyword and arg.keyword.value == "sync_dist"), None
    )
    if synced is None or (isinstance(synced, cst.Name) and synced.value == "False"):
        return None
    keys = node.args[0].value if func.attr.value == "log_dict" and node.args else None
    return SyncedLog(func.attr.value, keys)


def collective_property(node: cst.Attribute, function_name: str) -> CallSpec | None:
    """The catalog row of a property read that is a collective, in ``function_name``."""
    spec = lookup_property(node.attr.value, last_name(node.value))
    if spec is None:
        return None
    if node.attr.value in HOOK_ONLY_PROPERTIES and not function_name.startswith("on_"):
        return None
    return spec


# Lightning's launchers: with one device on one node they run the code in
# this process only (no other rank exists).
_LAUNCHERS = frozenset({"Trainer", "Fabric"})
_LIGHTNING = ("lightning.", "pytorch_lightning.", "lightning_fabric.")


def single_process_launch(node: cst.Call, names: NameTable) -> bool:
    """``Trainer(devices=1)`` / ``Fabric(devices=1)`` on one node (``num_nodes`` absent or 1)."""
    func = node.func
    short = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    if short not in _LAUNCHERS:
        return False
    qualified = names.resolve(func)
    if qualified is None or not qualified.startswith(_LIGHTNING):
        return False
    devices = nodes = None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "devices":
            devices = arg.value
        elif arg.keyword is not None and arg.keyword.value == "num_nodes":
            nodes = arg.value
    return _is_one(devices) and (nodes is None or _is_one(nodes))


def _is_one(node: cst.BaseExpression | None) -> bool:
    """``1`` or a list of one device (``[0]``)."""
    if isinstance(node, cst.Integer):
        return node.value == "1"
    return isinstance(node, cst.List) and len(node.elements) == 1


def sharded_in_place(node: cst.Call, names: NameTable) -> str | None:
    """``fully_shard(model)`` on the default mesh: the name of the model it shards.

    Its calls (forward, ``generate``) are then collectives on every rank of the
    default group. With a mesh of its own, the members are not known: None.
    """
    if names.resolve(node.func) not in FULLY_SHARD or not node.args:
        return None
    model = node.args[0].value
    if not isinstance(model, cst.Name) or any(
        arg.keyword is not None and arg.keyword.value in WRAPPER_GROUP_KEYWORDS for arg in node.args
    ):
        return None
    return model.value


def removed_hook(module: ModuleSummary, function: FunctionSummary) -> bool:
    """A method of a ``Callback`` subclass named like a hook that Lightning 2.0 removed,
    in a file that imports the 2.x ``lightning`` package: code that never runs."""
    if function.class_name is None or function.name not in REMOVED_LIGHTNING_HOOKS:
        return False
    bases = module.classes.get(function.class_name, ())
    if not any(base.rpartition(".")[2].endswith("Callback") for base in bases):
        return False
    return any(name == "lightning" or name.startswith("lightning.") for name in module.imports)
