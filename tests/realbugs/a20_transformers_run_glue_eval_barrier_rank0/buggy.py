"""Only the master process evaluates, and evaluation reaches a barrier the others never enter.

Report: https://github.com/huggingface/transformers/pull/1081
Class: A rank-divergent collective

Static reach: visible; evaluate() runs under `if args.do_eval and args.local_rank in
[-1, 0]:`, and evaluate() -> load_and_cache_examples() ends in `if args.local_rank == 0:
torch.distributed.barrier()`, which the other ranks (already past main) never match.
"""

import os

import torch
import torch.distributed
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset


def load_and_cache_examples(args, task, tokenizer, evaluate=False):
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()  # Make sure only the first process in distributed training process the dataset, and the others will use the cache

    processor = processors[task]()
    cached_features_file = os.path.join(
        args.data_dir, "cached_{}_{}_{}".format("dev" if evaluate else "train", args.max_seq_length, task)
    )
    if os.path.exists(cached_features_file):
        features = torch.load(cached_features_file)
    else:
        examples = processor.get_dev_examples(args.data_dir) if evaluate else processor.get_train_examples(args.data_dir)
        features = convert_examples_to_features(examples, tokenizer, args.max_seq_length)
        if args.local_rank in [-1, 0]:
            torch.save(features, cached_features_file)

    if args.local_rank == 0:
        torch.distributed.barrier()  # Make sure only the first process in distributed training process the dataset, and the others will use the cache

    all_input_ids = torch.tensor([f.input_ids for f in features], dtype=torch.long)
    all_label_ids = torch.tensor([f.label_id for f in features], dtype=torch.long)
    return TensorDataset(all_input_ids, all_label_ids)


def evaluate(args, model, tokenizer, prefix=""):
    eval_task_names = ("mnli", "mnli-mm") if args.task_name == "mnli" else (args.task_name,)
    results = {}
    for eval_task in eval_task_names:
        eval_dataset = load_and_cache_examples(args, eval_task, tokenizer, evaluate=True)
        eval_dataloader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=args.eval_batch_size)
        results.update(run_eval_loop(model, eval_dataloader, eval_task, prefix))
    return results


def main(args, model_class, tokenizer_class):
    tokenizer = tokenizer_class.from_pretrained(args.model_name_or_path)
    model = model_class.from_pretrained(args.model_name_or_path)
    if args.do_train:
        train_dataset = load_and_cache_examples(args, args.task_name, tokenizer, evaluate=False)
        train(args, train_dataset, model, tokenizer)

    results = {}
    if args.do_eval and args.local_rank in [-1, 0]:
        checkpoints = [args.output_dir]
        for checkpoint in checkpoints:
            global_step = checkpoint.split("-")[-1] if len(checkpoints) > 1 else ""
            model = model_class.from_pretrained(checkpoint)
            model.to(args.device)
            result = evaluate(args, model, tokenizer, prefix=global_step)  # expect: RNK102
            results.update(result)
    return results
