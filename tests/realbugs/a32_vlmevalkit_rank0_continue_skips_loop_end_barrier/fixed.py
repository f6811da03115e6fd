"""The per-dataset barrier moves to the start of the loop body, which every rank reaches.

Report: https://github.com/open-compass/VLMEvalKit/pull/772
Class: A rank-divergent collective
"""

import logging
import os.path as osp

import torch.distributed as dist

logger = logging.getLogger(__name__)


def main(args, model_name, pred_root, rank, world_size):
    model = None
    for _, dataset_name in enumerate(args.data):
        if world_size > 1:
            dist.barrier()

        try:
            result_file_base = f'{model_name}_{dataset_name}.xlsx'

            # If distributed, first build the dataset on the main process for doing preparation works
            if world_size > 1:
                if rank == 0:
                    dataset = build_dataset(dataset_name)
                dist.barrier()

            dataset = build_dataset(dataset_name)
            if dataset is None:
                logger.error(f'Dataset {dataset_name} is not valid, will be skipped. ')
                continue

            result_file = osp.join(pred_root, result_file_base)

            if world_size > 1:
                dist.barrier()

            if model is None:
                model = model_name  # which is only a name

            model = infer_data_job(model, work_dir=pred_root, model_name=model_name, dataset=dataset)

            judge_kwargs = {'nproc': args.api_nproc, 'verbose': args.verbose}

            if world_size > 1:
                dist.barrier()

            # Only Rank 0 handles the evaluation part
            if rank == 0:
                # Skip the evaluation part if only infer
                if args.mode == 'infer':
                    continue

                eval_results = dataset.evaluate(result_file, **judge_kwargs)
                if eval_results is not None:
                    logger.info(f'The evaluation of model {model_name} x dataset {dataset_name} has finished! ')

        except Exception as e:
            logger.exception(f'Model {model_name} x Dataset {dataset_name} combination failed: {e}, '
                             'skipping this combination.')
            continue

    if world_size > 1:
        dist.destroy_process_group()
