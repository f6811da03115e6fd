"""A rank that already sees the main process's text file skips run_on_main(), whose barrier the others wait in.

Report: https://github.com/speechbrain/speechbrain/pull/2633
Class: A rank-divergent collective

Static reach: partly; run_on_main() runs the function on the main process and then enters
a DDP barrier on every process (speechbrain.utils.distributed), and it sits under
`if not os.path.isfile(self.text_file):`, a test of the rank-local filesystem that the main
process itself makes true by writing the file.
"""

import logging
import os.path

import sentencepiece as spm

from speechbrain.utils.distributed import run_on_main

logger = logging.getLogger(__name__)


class SentencePiece:
    def __init__(self, model_dir, vocab_size, annotation_train=None, annotation_read=None,
                 model_type="unigram", annotation_format="csv", text_file=None):
        if not os.path.isdir(model_dir):
            os.makedirs(model_dir)
        self.annotation_train = annotation_train
        self.annotation_read = annotation_read
        self.annotation_format = annotation_format
        if self.annotation_train is not None:
            ext = os.path.splitext(self.annotation_train)[1]
            if text_file is None:
                text_file = os.path.join(model_dir, os.path.basename(self.annotation_train).replace(ext, ".txt"))
            self.text_file = text_file
        self.prefix_model_file = os.path.join(model_dir, str(vocab_size) + "_" + model_type)
        self.vocab_size = str(vocab_size)
        self.model_type = model_type

        if not os.path.isfile(self.prefix_model_file + ".model"):
            logger.info("Train tokenizer with type:" + self.model_type)
            if not os.path.isfile(self.text_file):
                if annotation_format == "csv":
                    run_on_main(self._csv2text)  # expect: RNK102
                else:
                    raise ValueError("Annotation format not supported. Got " + annotation_format)
            run_on_main(self._train_BPE)
        else:
            logger.info("Tokenizer is already trained.")

        self.sp = spm.SentencePieceProcessor()
        self.sp.load(self.prefix_model_file + ".model")

    def _csv2text(self):
        """Read CSV file and convert specific data entries into text file."""
        ...

    def _train_BPE(self):
        """Train tokenizer with unsupervised techniques (BPE, Unigram)."""
        query = "--input=" + self.text_file + " --model_prefix=" + self.prefix_model_file
        spm.SentencePieceTrainer.train(query)
