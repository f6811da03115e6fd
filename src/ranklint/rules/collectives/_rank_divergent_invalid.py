"""The invalid examples of RNK102 (rank-divergent-collective); the valid ones are in
:mod:`ranklint.rules.collectives._rank_divergent_examples`.

Each re-creates the shape of a public report, cited in its comment; the test
suite runs every example and the rule reference shows them.
"""

from __future__ import annotations

INVALID: tuple[str, ...] = (
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
            dist.broadcast(t, src=0)  # expect: RNK102 (medium)
        else:
            dist.all_reduce(t)
    """,
    """
    import torch.distributed as dist


    def sync(t, rank):
        done = dist.barrier() if rank == 0 else None  # expect: RNK102 (medium)
        rank == 0 and dist.all_reduce(t)  # expect: RNK102 (medium)
        return done
    """,
    """
    import torch.distributed as dist


    def drain(t, rank):
        while rank < 2:
            dist.all_reduce(t)  # expect: RNK102 (medium)
        for _ in range(rank):
            dist.barrier()  # expect: RNK102 (medium)
    """,
    """
    import sys

    import torch.distributed as dist


    def finish(t, rank, bad):
        if rank != 0:
            return
        dist.barrier()  # expect: RNK102 (medium)


    def check(t, rank):
        if rank == 0 and t.isnan().any():
            sys.exit(1)
        dist.all_reduce(t)  # expect: RNK102 (medium)


    def loop(batches, rank):
        for batch in batches:
            if rank == 0:
                continue
            dist.all_reduce(batch)  # expect: RNK102 (medium)


    def drain(batches, rank):
        for batch in batches:
            if rank != 0 and batch is None:
                break
            dist.all_reduce(batch)  # expect: RNK102 (medium)
    """,
    """
    import torch.distributed as dist


    def maybe_sync(t, rank):
        # `or`: the right side runs only where the left side is false.
        rank != 0 or dist.barrier()  # expect: RNK102 (medium)
    """,
    """
    import torch.distributed as dist
    from lightning.pytorch.utilities import rank_zero_only


    @rank_zero_only
    def save(state):
        dist.barrier()  # expect: RNK102
    """,
    """
    import functools

    import torch.distributed as dist


    def main_only(fn):
        # A home-made guard: judged by what its wrapper does, whatever its name.
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if dist.get_rank() != 0:
                return None
            return fn(*args, **kwargs)

        return wrapper


    @main_only
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
                    FSDP.optim_state_dict_to_load(model, optim, state)  # expect: RNK102 (medium)
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
    """
    import deepspeed
    import torch.distributed as dist

    DS_CONFIG = {"zero_optimization": {"stage": 3}}


    def evaluate(model, batch):
        # https://github.com/huggingface/transformers/issues/11464: under ZeRO-3
        # "anything involving forward calls must be performed on all gpus".
        engine, _, _, _ = deepspeed.initialize(model=model, config=DS_CONFIG)
        if dist.get_rank() == 0:
            loss = engine(batch)  # expect: RNK102
            print(f"eval loss {loss.item()}")
    """,
    """
    from accelerate import Accelerator, FullyShardedDataParallelPlugin

    accelerator = Accelerator(fsdp_plugin=FullyShardedDataParallelPlugin())


    def evaluate(model, batch):
        # https://github.com/pytorch/pytorch/issues/100069: FSDP's generate
        # all-gathers the parameters; ranks that do not run it deadlock the rest.
        model = accelerator.prepare(model)
        if accelerator.is_main_process:
            print(model.generate(batch))  # expect: RNK102
        accelerator.wait_for_everyone()
    """,
    """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    def validate(net, batch):
        # https://github.com/pytorch/pytorch/issues/54059: DDP's forward first
        # broadcasts the module's buffers; validating on rank 0 alone hangs.
        model = DDP(net)
        if dist.get_rank() == 0:
            with torch.no_grad():
                print(model(batch).mean())  # expect: RNK102
        dist.barrier()
    """,
    """
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP


    def wrap(model, world_size):
        if world_size == 1:
            return model
        return DDP(model)


    @torch.no_grad()
    def evaluate(model, loader):
        return sum(model(batch).item() for batch in loader)


    def finish(net, loader, world_size):
        # https://github.com/FareedKhan-dev/train-llm-from-scratch/pull/32: the final
        # eval runs the DDP model's forward on rank 0 alone, through a helper.
        model = wrap(net, world_size)
        if dist.get_rank() == 0:
            print(evaluate(model, loader))  # expect: RNK102
        dist.destroy_process_group()
    """,
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
            dist.barrier()  # expect: RNK102 (medium)
        return path
    """,
    """
    import torch
    import torch.distributed as dist


    def train(model, loader, validate, patience):
        # https://github.com/jpata/particleflow/pull/249: rank 0 alone decides to stop
        # early, under a data test in its validation block, and leaves the loop.
        stale = 0
        for step, batch in enumerate(loader):
            model(batch).backward()
            if step % 100 == 0:
                if dist.get_rank() == 0:
                    with torch.no_grad():
                        stale = stale + 1 if validate(model) else 0
                        if stale > patience:
                            return
            dist.barrier()  # expect: RNK102
    """,
    """
    import torch.distributed as dist
    from torchmetrics.image.fid import FrechetInceptionDistance


    class LipSync:
        def __init__(self):
            self.fid = FrechetInceptionDistance(feature=2048)

        def on_validation_end(self):
            # https://github.com/Lightning-AI/torchmetrics/issues/2684: compute()
            # gathers every rank's metric state, here on rank 0 alone.
            if dist.get_rank() == 0:
                print(self.fid.compute())  # expect: RNK102
    """,
)
