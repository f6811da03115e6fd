"""The valid and invalid examples of RNK102 (rank-divergent-collective).

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
)
INVALID: tuple[str, ...] = (
    """
    import os

    import torch.distributed as dist


    def create_cached_module(name, source, cache_dir):
        # https://github.com/unslothai/unsloth-zoo/pull/967 (a late rank skips the barrier)
        path = os.path.join(cache_dir, name + ".py")
        if not os.path.isfile(path):
            if dist.get_rank() == 0:
                with open(path, "w") as f:
                    f.write(source)
            dist.barrier()  # expect: RNK102
        return path
    """,
    """
    import torch.distributed as dist


    class Checkpointer:
        def save(self, state, path):
            dist.barrier()  # every rank must arrive


    def train(state, path):
        checkpointer = Checkpointer()  # a project class: its methods are followed
        if dist.get_rank() == 0:
            checkpointer.save(state, path)  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    def step(loss):
        if dist.get_rank() == 0:
            dist.all_reduce(loss)  # expect: RNK102
    """,
    """
    import os

    import torch.distributed as dist


    def sync(t):
        local_rank = int(os.environ["LOCAL_RANK"])
        if local_rank != 0:
            pass
        elif t.numel() > 0:
            dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    def sync(t, rank):
        # The arms issue different collectives.
        if rank == 0:
            dist.broadcast(t, src=0)  # expect: RNK102
        else:
            dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist


    def sync(t, rank):
        done = dist.barrier() if rank == 0 else None  # expect: RNK102
        rank == 0 and dist.all_reduce(t)  # expect: RNK102
        return done
    """,
    """
    import torch.distributed as dist


    def drain(t, rank):
        while rank < 2:
            dist.all_reduce(t)  # expect: RNK102
        for _ in range(rank):
            dist.barrier()  # expect: RNK102
    """,
    """
    import sys

    import torch.distributed as dist


    def finish(t, rank, bad):
        if rank != 0:
            return
        dist.barrier()  # expect: RNK102


    def check(t, rank):
        if rank == 0 and t.isnan().any():
            sys.exit(1)
        dist.all_reduce(t)  # expect: RNK102


    def loop(batches, rank):
        for batch in batches:
            if rank == 0:
                continue
            dist.all_reduce(batch)  # expect: RNK102


    def drain(batches, rank):
        for batch in batches:
            if rank != 0 and batch is None:
                break
            dist.all_reduce(batch)  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    def maybe_sync(t, rank):
        # `or`: the right side runs only where the left side is false.
        rank != 0 or dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist
    from lightning.pytorch.utilities import rank_zero_only


    @rank_zero_only
    def save(state):
        dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    def is_main():
        return dist.get_rank() == 0


    def save_checkpoint(state):
        dist.barrier()


    def train(state):
        if is_main():
            save_checkpoint(state)  # expect: RNK102
    """,
    """
    from accelerate import Accelerator

    accelerator = Accelerator()


    def evaluate(preds):
        if accelerator.is_main_process:
            preds = accelerator.gather(preds)  # expect: RNK102
        return preds
    """,
    """
    import torch.distributed as dist


    def setup():
        return dist.get_rank(), dist.get_world_size()


    def save_checkpoint(state):
        dist.barrier()


    def train(state):
        # The rank comes back from a helper, unpacked with the world size.
        r, w = setup()
        if r == 0:
            save_checkpoint(state)  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    # https://github.com/argonne-lcf/dlio_benchmark/pull/339: with 145 files on
    # 3 ranks, ranks 0 and 1 run 3 steps and rank 2 runs 2; the barrier hangs.
    def run(files, batch_size, epochs):
        rank, world = dist.get_rank(), dist.get_world_size()
        my_files = files[rank::world]
        steps = len(my_files) // batch_size
        for epoch in range(epochs):
            for step in range(steps):
                train_step(my_files[step * batch_size : (step + 1) * batch_size])
                dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    class Controller:
        # A stop flag set on rank 0 only and read later, in another method.
        def on_batch_end(self, loss):
            if dist.get_rank() == 0:
                self.should_stop = loss.item() > 10

        def on_epoch_end(self):
            if self.should_stop:
                dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist


    # https://github.com/Lightning-AI/pytorch-lightning/issues/7129: ranks do not
    # have the same metric keys; syncing them key by key runs a different
    # number of collectives per rank and hangs.
    def sync_metrics(loss):
        metrics = {"val_loss": loss}
        if dist.get_rank() == 0:
            metrics["reduced_metric"] = compute_reduced_metric()
        for key in sorted(metrics):
            dist.all_reduce(metrics[key])  # expect: RNK102
    """,
    """
    import torch.distributed as dist
    from torch.distributed.fsdp import FullOptimStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


    def load_optimizer_in_turns(model, optim, state, local_rank, local_world_size):
        # https://github.com/pytorch/pytorch/pull/99624: with `rank0_only=True`
        # loading broadcasts rank 0's state; every rank must load at once.
        config = FullOptimStateDictConfig(rank0_only=True)
        full = StateDictType.FULL_STATE_DICT
        with FSDP.state_dict_type(model, full, optim_state_dict_config=config):
            for turn in range(local_world_size):
                if turn == local_rank:
                    FSDP.optim_state_dict_to_load(model, optim, state)  # expect: RNK102
                dist.barrier()
    """,
    """
    import torch.distributed as dist


    def sync_tied_embedding(grad):
        # https://github.com/dylanyunlon/Neuron_SP/issues/51: the group holds the
        # first and the last stage, but only the first all-reduces.
        embedding_group = dist.new_group([0, 3])
        if dist.get_rank() == 0:
            dist.all_reduce(grad, group=embedding_group)  # expect: RNK102
    """,
)
