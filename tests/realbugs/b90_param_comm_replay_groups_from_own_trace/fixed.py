"""The ranks of every group are synced through the TCP store, so all ranks create all groups in the same order.

Report: https://github.com/facebookresearch/param/pull/151
Class: B partial group creation
"""

import json

import torch
import torch.distributed as dist


class PyTorchDistBackend:
    def get_new_pg(self, group_ranks, backend):
        pg = dist.new_group(ranks=group_ranks, backend=backend)
        return pg

    def initialize_groups(self, backend="gloo"):
        groups = {}
        world_size = self.get_world_size()
        global_rank = self.get_global_rank()

        # sync pgs across ranks to fix hang with multiple comm groups
        # because new_group() functions requires that all processes in the main group enter,
        # even if they are not going to be members of the group.
        # Assumption: pg_name is unique and consistent for all ranks
        sync_store = dist.PrefixStore("pg_sync_r", self.tcp_store)
        sync_store.set(str(global_rank), json.dumps(self.commsParams.groupRanks))
        torch.distributed.barrier()
        group_ranks_sync = self.commsParams.groupRanks.copy()
        for i in range(self.get_world_size()):
            if i == global_rank:
                continue
            json_data = sync_store.get(str(i))

            # convert pg_id in json_data to int
            pg_id2group_ranks = {int(pg_id): rank for pg_id, rank in json.loads(json_data).items()}

            group_ranks_sync.update(pg_id2group_ranks)

        # create additional groups
        for pg_id, group_ranks in dict(sorted(group_ranks_sync.items())).items():
            if len(group_ranks) > world_size:  # --auto-shrink is enabled, only use default pg
                groups.clear()
                break
            if len(group_ranks) == world_size:  # this is the default group, it has already been created
                pg = self.get_default_group()
            else:
                pg = self.get_new_pg(group_ranks=group_ranks, backend=backend)
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
