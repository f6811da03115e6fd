"""The valid examples of RNK102 (rank-divergent-collective); the invalid ones are in
:mod:`ranklint.rules.collectives._rank_divergent_invalid`.

Kept apart from the rule so that the rule module stays short; the test suite
runs every example and the rule reference shows them.
"""

from __future__ import annotations

VALID: tuple[str, ...] = (
    """
    import torch.distributed as dist


    def step(loss, rank):
        dist.all_reduce(loss)  # every rank, outside the branch
        if rank == 0:
            print(f"loss {loss.item()}")
    """,
    """
    import torch.distributed as dist


    def sync(t):
        # Both arms issue the same collectives, in the same order.
        if dist.get_rank() == 0:
            t.fill_(1.0)
            dist.broadcast(t, src=0)
        else:
            dist.broadcast(t, src=0)
    """,
    """
    import torch.distributed as dist


    def exchange(t, rank):
        # Point-to-point: rank conditions are how it works.
        if rank == 0:
            dist.send(t, dst=1)
        else:
            dist.recv(t, src=0)
    """,
    """
    import torch.distributed as dist


    def maybe_sync(t, world_size, cfg):
        if world_size > 1 and dist.is_initialized() and cfg.sync:
            dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist


    def subgroup_sum(t, ranks, group):
        # Every member of `group` takes this branch.
        if dist.get_rank() in ranks:
            dist.all_reduce(t, group=group)
    """,
    """
    import torch.distributed as dist


    def reduce_grads(t, tp_rank, dp_group, mesh):
        # A tensor-parallel condition around data-parallel collectives: all
        # members of the data-parallel group share the same tp_rank.
        if tp_rank == 0:
            dist.all_reduce(t, group=dp_group)
            dist.all_reduce(t, group=mesh["dp"].get_group())
    """,
    """
    import torch.distributed as dist

    if __name__ == "__main__":
        dist.init_process_group("gloo")
        dist.barrier()
    """,
    """
    import torch.distributed as dist


    def log(msg, barrier=True):
        if barrier:
            dist.barrier()
        print(msg)


    def report(rank):
        if rank == 0:
            log("done", barrier=False)
    """,
    """
    import torch.distributed as dist


    def factorise(weight, lora_rank, matrix_rank):
        # Names that merely contain "rank" are not the caller's rank.
        if lora_rank > 8 and matrix_rank:
            dist.all_reduce(weight)
    """,
    """
    import torch.distributed as dist


    def push_weights(model, rank, weight_sync_group):
        # An RL trainer's weight-sync group: rank 0 and the inference
        # engines. Its members are exactly the ranks that take the branch;
        # a group whose axis cannot be told from its name is not judged.
        if rank == 0:
            for param in model.parameters():
                dist.broadcast(param, src=0, group=weight_sync_group)
    """,
    """
    import torch.distributed as dist


    def in_grid(grid):
        return dist.get_rank() in grid.ranks


    def send_activations(t, grid, grid_group):
        # A project predicate that tests membership of the group's ranks.
        if in_grid(grid):
            dist.broadcast(t, src=grid.ranks[0], group=grid_group)
    """,
    """
    import contextlib

    import torch.distributed as dist


    @contextlib.contextmanager
    def main_process_first(rank):
        # Every rank calls barrier once, rank 0 after the others: balanced.
        if rank > 0:
            dist.barrier()
        yield
        if rank == 0:
            dist.barrier()
    """,
    """
    import torch.distributed as dist


    def check_inputs(t, rank):
        # A rank that raises fails loudly; the launcher stops the job.
        if rank == 0 and t.isnan().any():
            raise ValueError("NaN input")
        dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist


    def gather_shard(tensor, src, group):
        shape = tensor.shape if dist.get_rank() == src else None
        holder = [shape]
        dist.broadcast_object_list(holder, src=src, group=group)
        shape = holder[0]  # the same on every rank after the broadcast
        if shape is None:
            return None
        dist.all_reduce(tensor)
        return tensor
    """,
    """
    import torch.distributed as dist


    def aggregate(losses, dp_group, pp_group=None):
        dist.all_reduce(losses, group=dp_group)
        if pp_group is not None:
            dist.broadcast(losses, src=0, group=pp_group)


    def evaluate(losses, dp_group, pp_rank, pp_size):
        # pp_group keeps its default None: the broadcast is not issued, and
        # the data-parallel all_reduce is orthogonal to the pipeline guard.
        if pp_rank == pp_size - 1:
            return aggregate(losses, dp_group)
        return None
    """,
    """
    import torch.distributed as dist


    def log(msg, in_order, rank):
        # The barrier loop runs when `in_order`, where the rank condition is
        # false on every rank.
        if not in_order and rank == 0:
            print(msg)
        elif in_order:
            for _ in range(4):
                dist.barrier()
    """,
    """
    import torch.distributed as dist
    from megatron.core.parallel_state import is_pipeline_first_stage, is_pipeline_last_stage


    def generate(logits, pp_group):
        # True on every rank without pipeline parallelism, on none with it.
        if not (is_pipeline_first_stage() and is_pipeline_last_stage()):
            dist.broadcast(logits, src=0, group=pp_group)
    """,
    """
    import torch.distributed as dist


    def reduce_embedding_grad(grad, embd_group):
        # Membership of the group guards a DTensor gather on its own mesh.
        if dist.get_rank() in dist.get_process_group_ranks(embd_group):
            full = grad.full_tensor()
            dist.all_reduce(full, group=embd_group)
    """,
    """
    import torch.distributed as dist


    def run(files, batch_size, epochs):
        # Every rank runs the same number of steps over its own share.
        rank, world = dist.get_rank(), dist.get_world_size()
        per_rank = len(files) // world
        my_files = files[rank::world][:per_rank]
        for epoch in range(epochs):
            for step in range(per_rank // batch_size):
                train_step(my_files[step * batch_size : (step + 1) * batch_size])
                dist.barrier()
    """,
    """
    import torch
    import torch.distributed as dist


    def on_batch_end(loss):
        # The flag is set on rank 0 only, then broadcast: every rank agrees.
        stop = torch.zeros(1)
        if dist.get_rank() == 0:
            stop = (loss > 10).float()
        dist.broadcast(stop, src=0)
        if stop.item():
            dist.barrier()
    """,
    """
    import torch.distributed as dist


    def log(msg, barrier=True):
        if barrier and dist.is_initialized():
            dist.barrier()


    def report(msg, args):
        # A literal argument switches the collective off; `local_rank != -1`
        # ("launched distributed") is the same on every rank.
        if dist.get_rank() == 0:
            log(msg, barrier=False)
        if args.local_rank != -1:
            dist.barrier()
    """,
    """
    import torch
    import torch.distributed as dist


    class Deployable:
        def serve_other_ranks(self):
            # Workers receive until the leader's message says stop: how
            # often is the leader's choice, not their rank's.
            while True:
                message = torch.empty(1, dtype=torch.long)
                dist.broadcast(message, src=0)
                if message != 0:
                    return


    def serve(requests):
        model = Deployable()
        if dist.get_rank() == 0:
            for _ in requests:
                dist.broadcast(torch.tensor([0]), src=0)  # one request
            dist.broadcast(torch.tensor([1]), src=0)  # stop
        else:
            model.serve_other_ranks()
    """,
    """
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        set_model_state_dict,
    )
    from torch.distributed.fsdp import fully_shard


    def init_from_rank0(model):
        # Rank 0 reads its plain module (nothing to gather yet); then every rank
        # shards it and receives rank 0's values.
        full = {}
        if dist.get_rank() == 0:
            full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
        fully_shard(model)
        options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
        set_model_state_dict(model, full, options=options)
    """,
    """
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


    def load_optimizer_in_turns(model, optim, state, local_rank, local_world_size):
        # With the default `rank0_only=False`, turning a full optimizer state
        # dict into this rank's shard is local: ranks may take turns.
        for turn in range(local_world_size):
            if turn == local_rank:
                FSDP.optim_state_dict_to_load(model, optim, state)
            dist.barrier()
    """,
    """
    import torch.distributed as dist


    def open_store(path):
        # Rank 0 creates the store first, then the others: every rank holds one.
        store = None
        if dist.get_rank() == 0:
            store = ObjectStore(path)
        dist.barrier()
        if dist.get_rank() != 0:
            store = ObjectStore(path)
        if store is not None:
            dist.barrier()
    """,
    """
    import torch.distributed as dist


    def sync_tied_embedding(grad):
        # Both members of the group (the first and last of four stages) take
        # the branch; ranks 1 and 2 are not in the group.
        embedding_group = dist.new_group([0, 3])
        if dist.get_rank() in (0, 3):
            dist.all_reduce(grad, group=embedding_group)
        tail_group = dist.new_group([2, 3])
        if dist.get_rank() >= 2:
            dist.all_reduce(grad, group=tail_group)
    """,
    """
    import deepspeed
    import torch.distributed as dist

    DS_CONFIG = {"zero_optimization": {"stage": 3}}


    def evaluate(model, batch):
        # Every rank runs the ZeRO-3 forward; rank 0 alone reports.
        engine, _, _, _ = deepspeed.initialize(model=model, config=DS_CONFIG)
        loss = engine(batch)
        if dist.get_rank() == 0:
            print(f"eval loss {loss.item()}")
    """,
    """
    from accelerate import Accelerator, FullyShardedDataParallelPlugin

    accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())


    def evaluate(model, batch):
        # Every rank generates with the sharded model; the main process prints.
        model = accelerator.prepare(model)
        out = model.generate(batch)
        if accelerator.is_main_process:
            print(out)
    """,
    """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    def validate(net, batch):
        # Rank 0 validates with the wrapped module, whose forward is local.
        model = DDP(net)
        if dist.get_rank() == 0:
            with torch.no_grad():
                print(model.module(batch).mean())
        dist.barrier()
    """,
    """
    import torch.distributed as dist


    def rank_zero_only(fn):
        # Named like a rank-zero guard, but its wrapper calls on every rank.
        def wrapper(*args, **kwargs):
            if dist.get_rank() == 0:
                print("calling", fn.__name__)
            return fn(*args, **kwargs)

        return wrapper


    @rank_zero_only
    def sync(t):
        dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist

    DEBUG = False


    def step(t):
        # A module flag bound once and never rebound: this exit is dead code.
        if DEBUG and dist.get_rank() == 0:
            return
        dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist
    from torchmetrics.classification import BinaryAccuracy


    def report(preds, target):
        acc = BinaryAccuracy(sync_on_compute=False)  # compute() reads this rank's state
        acc.update(preds, target)
        if dist.get_rank() == 0:
            print(acc.compute())
    """,
)
