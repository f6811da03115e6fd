"""Each rank creates only the process groups listed in its own trace, so new_group() calls differ across ranks.

Report: https://github.com/facebookresearch/param/pull/151
Class: B partial group creation

Static reach: partly; setBench() fills `commsParams.groupRanks` from `self.comms_trace`, which
readTrace() loaded from this rank's own file (`{trace_file}/{rank}.json`), and
initialize_groups() calls new_group() once per entry. That different ranks' traces list
different groups (rank 0 sees TP group [0..7], rank 8 sees [8..15]) is a fact of the traces.
"""

import json

import torch.distributed as dist


class PyTorchDistBackend:
    def get_new_pg(self, group_ranks, backend):
        return dist.new_group(ranks=group_ranks, backend=backend)

    def initialize_groups(self, backend="gloo"):
        groups = {}
        world_size = self.get_world_size()

        # create additional groups
        for pg_id, group_ranks in self.commsParams.groupRanks.items():
            if len(group_ranks) > world_size:  # --auto-shrink is enabled, only use default pg
                groups.clear()
                break
            if len(group_ranks) == world_size:  # this is the default group, it has already been created
                pg = self.get_default_group()
            else:
                pg = self.get_new_pg(group_ranks=group_ranks, backend=backend)  # expect: RNK105
            groups[pg_id] = pg

        # if additional groups are created, overwrite the default groups list
        if len(groups):
            self.groups = groups
        self.num_pgs = len(self.groups)


class commsTraceReplayBench:
    def readTrace(self, remotePath: str, rank: int) -> None:
        # 1) Each rank reads its trace
        with open(f"{remotePath}/{rank}.json") as f:
            self.comms_trace = json.load(f)

    def setBench(self, commsParams) -> None:
        # init process groups
        for curComm in self.comms_trace:
            # record process group info
            if curComm.comms == "init":
                commsParams.groupRanks[curComm.pgId] = curComm.groupRanks
        self.backendFuncs.initialize_groups(commsParams.backend)
