"""The InfoNCE loss over the batch gathered from all ranks is divided by world_size
("avoid duplicate"), although DDP already averages the gradients over the ranks.

Report: https://github.com/modelscope/ms-swift/pull/6597
Class: F reduction semantics

Static reach: visible inside one function; `world_size` comes from get_dist_setting(),
the embeddings of every rank are gathered with gather_object(), the cross-entropy is
already the mean over that global batch, and the result is divided by `world_size`
before it is returned as the training loss that DDP backpropagates and averages.
"""

import os

import torch
import torch.nn as nn
from accelerate.utils import gather_object

from swift.utils import get_dist_setting


def infonce_loss(outputs, labels, loss_scale=None, num_items_in_batch=None, **kwargs) -> torch.Tensor:
    temperature = float(os.environ.get('INFONCE_TEMPERATURE', '0.01'))
    rank, _, world_size, _ = get_dist_setting()
    sentences = outputs['last_hidden_state']

    if world_size > 1:
        # gather all the sentences and labels across the gpus when calculate loss across all batches of all gpus
        all_sentences = gather_object(sentences.unsqueeze(0))
        labels = gather_object(labels)
        # override the gathered one
        all_sentences[rank] = sentences
        for idx in range(len(all_sentences)):
            if idx == rank:
                continue
            # we don't calculate grad from other gpus
            all_sentences[idx] = all_sentences[idx].detach().to(sentences.device)
        sentences = torch.cat(all_sentences, dim=0)
        labels = [tensor.to(sentences.device) for tensor in labels]
        labels = torch.stack(labels, dim=0)

    split_tensors = _parse_multi_negative_sentences(sentences, labels)
    # [B, neg+2, D]
    sentences = torch.stack(split_tensors, dim=0)
    queries = sentences[:, 0].squeeze(1)  # [B, D]
    docs_all = sentences[:, 1:].reshape(-1, sentences.size(2))  # [B*(neg+1), D]
    qd_matrix = torch.matmul(queries, docs_all.T)  # [B, B*(neg+1)]
    labels = torch.tensor(range(0, sentences.size(0) * (sentences.size(1) - 1),
                                sentences.size(1) - 1)).view(-1).to(sentences.device)
    similarity_matrix = qd_matrix / temperature
    loss = nn.CrossEntropyLoss()(similarity_matrix, labels) / world_size  # avoid duplicate  # expect: RNK112
    return loss
