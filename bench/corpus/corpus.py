"""Build and lint a review corpus: full source trees of distributed-training projects.

    python bench/corpus/corpus.py halves [--round N]
    python bench/corpus/corpus.py build [--cache DIR] [--mirror-root DIR]
                                        [--project NAME ... | --half H]
    python bench/corpus/corpus.py lint [--cache DIR] [--rules default|all ...] [--out FILE]
                                       [--jobs N]
                                       [--project NAME ... | --half tuning|test [--round N]]
    python bench/corpus/corpus.py compare BEFORE.jsonl AFTER.jsonl [--prefix RNK1]
    python bench/corpus/corpus.py sample FINDINGS.jsonl [--prefix RNK2] [--per-code 30] [--seed 16]

``halves`` prints the two halves of the corpus: the **tuning half**, which
rules may be changed for, and the **test half**, which is linted once at the
end of a round and judged, never tuned on. From the fourth round of issue 37
each round's test half is a set of projects fetched for it and read by
nobody here before they were judged (``TEST_ROUNDS``: ``FRESH``, then
``FRESH5``); every earlier project is in the tuning half, since each earlier
test half was read once judged. Before that (``round3_halves``)
the ten projects of the earlier rounds (``TUNED_BEFORE``) were in the tuning
half and the others were split at random with ``SPLIT_SEED``:
``TUNING_DRAWN`` of them joined the tuning half, the rest made the test half;
a test-half project whose finding led to a change moved to the tuning half
(``MOVED``) and a spare (``SPARES``) took its place.

Unlike ``bench/corpus/ecosystem.py`` (published wheels), this corpus holds each
project's whole repository at a pinned commit: tests, examples and scripts
included, which is where most review-worthy findings of the test and script
rules live.

``build`` exports the ``.py`` files (plus ``pyproject.toml``, ``setup.cfg`` and
``setup.py``, which mark the project root) of each pinned commit into
``DIR/src/<project>`` (default ``.cache/corpus``, git-ignored; a project already
exported at its pinned commit is skipped) and writes ``DIR/manifest.json``.
With ``--mirror-root`` the commit is read from a local bare mirror
``<root>/<owner>+<name>/repo`` (or ``<root>/<owner>+<name>`` itself when that
is a git directory); otherwise the repository is cloned from GitHub
(``--filter=blob:none``, then the pinned commit is checked out) into
``DIR/git/<project>``. Only regular files are exported: symlinks and other
special entries are skipped.

``lint`` runs ranklint in-process on each exported project with the default
rule selection and/or every rule (``--rules``, both by default), at every
confidence (each record says its tier and evidence), and prints findings per
code per project (at every confidence, and at the default one), the seconds
each project took and every internal error. ``--out FILE`` writes every
finding as one JSON object a line (``rules``, ``project``, ``path`` relative
to ``DIR/src``, ``line``, ``col``, ``code``, ``message``, ``confidence``,
``evidence`` and more) for review. Exits 1 if any internal error
occurred. Nothing downloaded is committed.

``compare`` reads two ``--out`` files (say, of the last release and of the
checkout) and prints findings per code (``--prefix``, default ``RNK1``) before
and after, then each finding that went away or appeared.

``sample`` draws at most ``--per-code`` findings of each code (``--prefix``)
from a ``--out`` file at random with a fixed ``--seed`` (all of them where
there are fewer) and prints them as a Markdown review table (path, line,
message, an empty verdict column), for hand review in
``docs/dev/ecosystem-review.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ranklint import Config, Finding, LintResult, lint_paths

# name -> (GitHub owner/name, commit). Pinned so that runs are comparable
# across ranklint versions and findings can be reviewed against fixed lines.
PROJECTS: dict[str, tuple[str, str]] = {
    "colossalai": ("hpcaitech/ColossalAI", "4f9953be335ef371b3848719ddafe596c01ecd37"),
    "composer": ("mosaicml/composer", "6405188805a0054b4551ec49e4919c54c971d0e8"),
    "gpt-neox": ("EleutherAI/gpt-neox", "ea7aefd8f8e183256992d9fede4d7c71a46d67a5"),
    "litgpt": ("Lightning-AI/litgpt", "26857050fe3ff627cd714fe92f5838f51a3d5efa"),
    "nemo": ("NVIDIA/NeMo", "8cfedd7203462cb251a914e700e5605444277561"),
    "olmo": ("allenai/OLMo", "59a53e3f68e546330ca5a99ec626e58f9ab96494"),
    "pytorch-lightning": (
        "Lightning-AI/pytorch-lightning",
        "7f0c3436cd3f6ad3753125672024fc415cbcb414",
    ),
    "slime": ("THUDM/slime", "624b824a898ab0ec1fcb4d373004c7f3852bf515"),
    "torchrec": ("meta-pytorch/torchrec", "376cac6ad13c3a6e7fd43cc0fe432abbc7c39f7d"),
    "torchtune": ("pytorch/torchtune", "bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1"),
    # Added for issue 35 (fetched 2026-12-06, HEAD of the default branch).
    "alpa": ("alpa-projects/alpa", "b8078a9f75cb4c90cabb4550ee48c99ef394e209"),
    "apex": ("NVIDIA/apex", "6424da3b4faa6c8f062da4a48c424fff3f02d42d"),
    "deepspeed-examples": (
        "deepspeedai/DeepSpeedExamples",
        "45b4b7156c8794a3452a5a7d03dbd8d797068569",
    ),
    "detectron2": ("facebookresearch/detectron2", "02b5c4e295e990042a714712c21dc79b731e8833"),
    "dinov2": ("facebookresearch/dinov2", "b8931f7bf91576930313be2c6d6af376033b35f0"),
    "fairseq2": ("facebookresearch/fairseq2", "027bdebca4b9177f1ac1df1cc981b9288465d68e"),
    "internvl": ("OpenGVLab/InternVL", "2410d1dbf208f0e799459aff9376e5747dbf41a2"),
    "lavis": ("salesforce/LAVIS", "506965b9c4a18c1e565bd32acaccabe0198433f7"),
    "lingua": ("facebookresearch/lingua", "437d680e521873bb5971067148a69587790da853"),
    "lit-llama": ("Lightning-AI/lit-llama", "2a464de2a1d2f266614d15091d3d7f30330c3ede"),
    "ms-swift": ("modelscope/ms-swift", "3602360a562313afbf2ef6065fdf61f271a2c5b9"),
    "nemo-rl": ("NVIDIA-NeMo/RL", "7ea279abfbeb698b092856d0dab61e7cf39bc909"),
    "olmo-core": ("allenai/OLMo-core", "fa6c5014c9f6e9ee789da2d9c20d5126fee8df0d"),
    "open-clip": ("mlfoundations/open_clip", "89fb801f1e6087880e951fc8354b8a2077b79c6d"),
    "open-instruct": ("allenai/open-instruct", "e6c3044aa6201c8bfa4573c1b03142af599e730d"),
    "open-sora": ("hpcaitech/Open-Sora", "7ad6a96a135feb81f755c84fb391818718f6beb2"),
    "peft": ("huggingface/peft", "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40"),
    "prime-rl": ("PrimeIntellect-ai/prime-rl", "559b44772e471d1538537b8805cc77f3824a5e64"),
    "pytorch-examples": ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8"),
    "tnt": ("pytorch/tnt", "b83990d2e1c32ea78e49f5d464516abc26db1848"),
    "torchforge": ("meta-pytorch/torchforge", "6e77f0b37596ef4d4f31924fbc46eb77d0c8043d"),
    "torchscale": ("microsoft/torchscale", "4d1e0e82e5adf86dd424f1463192635b73fc8efc"),
    "transformer-engine": (
        "NVIDIA/TransformerEngine",
        "d0067d0da6cb01811b8072a7d304f0e00344ce2b",
    ),
    "xformers": ("facebookresearch/xformers", "ca6d2aa0d43241fc8a8dcd872debc2406160160d"),
}
# Replace a test-half project that moved to the tuning half, in this order.
SPARES: dict[str, tuple[str, str]] = {
    "openrl": ("OpenRL-Lab/openrl", "4c92aa440c12a6834c3fd76c574a341480868436"),
    # Added in the second round of issue 35 (fetched 2026-12-06, HEAD of the
    # default branch), read by nobody here before they were judged.
    "picotron": ("huggingface/picotron", "59714b1bf25541dbeb6f5a721ed15f6d0768e786"),
    "streaming": ("mosaicml/streaming", "89e7bb9082457a59f6efcfa4ef910102e07a9729"),
    "roll": ("alibaba/ROLL", "8eb27cc2dc34c4d1310b169d9b86d339004d811a"),
    "trlx": ("CarperAI/trlx", "3340c2f3a56d1d14fdd5f13ad575121fa26b6d92"),
    "fastchat": ("lm-sys/FastChat", "0e6d3e4beaab66f4d3f93db72541a4abab8af28d"),
    # Added in the second round of issue 37 (fetched 2026-12-07, HEAD of the
    # default branch), read by nobody here before they were judged.
    "mmengine": ("open-mmlab/mmengine", "254342938d9bde1775c39ea7d5181c5d294026c4"),
    "open-lm": ("mlfoundations/open_lm", "9bb92ef1689333534b7057942a20d18a46d1fa52"),
    "axolotl": ("axolotl-ai-cloud/axolotl", "067b021c8b87a9e5e380b9173c704cf7340e30f5"),
    "modded-nanogpt": ("KellerJordan/modded-nanogpt", "f411b3d346aa52d3504324ca93c230fd84c6c07f"),
    # Added in the third round of issue 37 (fetched 2026-12-07, HEAD of the
    # default branch), read by nobody here before they were judged.
    "lerobot": ("huggingface/lerobot", "7427f31801f944f5ec9ce53cda02862ce7d1638b"),
    "metaseq": ("facebookresearch/metaseq", "f7ffa5fd61cf90f498a36d365c13dd7f1a912ff7"),
    "petals": ("bigscience-workshop/petals", "22afba627a7eb4fcfe9418c49472c6a51334b8ac"),
    "mae": ("facebookresearch/mae", "efb2a8062c206524e35e47d04501ed4f544c0ae8"),
    "open-r1": ("huggingface/open-r1", "1416fa0cf21595d2083b399a2a0bbddd7f6e9563"),
    "mosaic-diffusion": ("mosaicml/diffusion", "49282fd7b2ecde2d5bafb1ca6476d9239865665f"),
}
# The test half from the fourth round of issue 37 on (fetched 2026-12-07, HEAD
# of the default branch), read by nobody here before they were judged. The
# round-3 test half had been read to tune on (loops in tests, a loop's end,
# a value tested by the next statements), so every earlier project is in the
# tuning half now. TinyLlama was fetched and left out: it vendors lit-gpt,
# whose successor litgpt is in the tuning half.
FRESH: dict[str, tuple[str, str]] = {
    "audiocraft": ("facebookresearch/audiocraft", "896ec7c47f5e5d1e5aa1e4b260c4405328bf009d"),
    "blip": ("salesforce/BLIP", "056a169437371659074aa2732649d5de3bffb4a8"),
    "cleanrl": ("vwxyzjn/cleanrl", "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb"),
    "deit": ("facebookresearch/deit", "7e160fe43f0252d17191b71cbb5826254114ea5b"),
    "diffusers": ("huggingface/diffusers", "58eb52c0803ea9af3abec60841c2a093bdf1f951"),
    "dino": ("facebookresearch/dino", "7c446df5b9f45747937fb0d72314eb9f7b66930a"),
    "generative-models": (
        "Stability-AI/generative-models",
        "0ad7de9a5cb53fd63d6d30a4f385485e72e08597",
    ),
    "guided-diffusion": ("openai/guided-diffusion", "22e0df8183507e13a7813f8d38d51b072ca1e67c"),
    "llama-cookbook": ("meta-llama/llama-cookbook", "0e0033518623d03ac5c1654bf04b7e480f7d5e5a"),
    "llava": ("haotian-liu/LLaVA", "c121f0432da27facab705978f83c4ada465e46fd"),
    "mingpt": ("karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26"),
    "moco-v3": ("facebookresearch/moco-v3", "c349e6e24f40d3fedb22d973f92defa4cedf37a7"),
    "nanovlm": ("huggingface/nanoVLM", "4e0c0961846135c2217f95e54cb4c2d66eb55e42"),
    "oat": ("sail-sg/oat", "c1a074c320ff5ca9fe9a4f669bf05208e2f310be"),
    "open-flamingo": ("mlfoundations/open_flamingo", "655f693fbfa04cd6e9a987d960654624d48917cf"),
    "parler-tts": ("huggingface/parler-tts", "d108732cd57788ec86bc857d99a6cabd66663d68"),
    "sd-scripts": ("kohya-ss/sd-scripts", "48d368fa557731ad0488c07304dfeba8c07910eb"),
    "timm": ("huggingface/pytorch-image-models", "aa4b5850c1543fa488abf260f18390eda46cf85d"),
    "torchao": ("pytorch/ao", "36027d82d1ad9949597ea16002ff4940374b1b94"),
}
# The test half of the fifth round (fetched 2026-12-07, HEAD of the default
# branch), read by nobody here before they were judged: it measures the rules
# as changed after the fourth round's test half (``FRESH``) had been judged
# and read. ConvNeXt (a copy of deit's training engine) and MiniGPT-4 (built on
# LAVIS, in the tuning half) were fetched and left out.
FRESH5: dict[str, tuple[str, str]] = {
    "alignment-handbook": (
        "huggingface/alignment-handbook",
        "925acdfe4b2b4e38c3dabd1851bc418f0b656351",
    ),
    "allennlp": ("allenai/allennlp", "80fb6061e568cb9d6ab5d45b661e86eb61b92c82"),
    "detr": ("facebookresearch/detr", "29901c51d7fe8712168b8d0d64351170bc0f83e0"),
    "fairseq": ("facebookresearch/fairseq", "3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99"),
    "lightning-thunder": (
        "Lightning-AI/lightning-thunder",
        "1e22aacb1aef6e79718a5ca2f49ab91b993cb4ef",
    ),
    "lmflow": ("OptimalScale/LMFlow", "f3597dba134e8bb3d2cfedeaaae6fc7296ace924"),
    "qlora": ("artidoro/qlora", "7f4e95a68dc076bea9b3a413d2b512eca6d004e5"),
    "segment-anything": (
        "facebookresearch/segment-anything",
        "dca509fe793f601edb92606367a655c15ac00fdf",
    ),
    "swin-transformer": ("microsoft/Swin-Transformer", "f82860bfb5225915aca09c3227159ee9e1df874d"),
    "torchchat": ("pytorch/torchchat", "a1a7f3702e52fffd798e302fa049b56b608602aa"),
}
# Each round's test half, oldest first: the last is the test half now; the
# earlier ones were read once judged and are in the tuning half.
TEST_ROUNDS: tuple[dict[str, tuple[str, str]], ...] = (FRESH, FRESH5)
PROJECTS.update(SPARES)
PROJECTS.update(FRESH)
PROJECTS.update(FRESH5)
# Tuned on in the rounds before issue 35: always in the tuning half.
TUNED_BEFORE = (
    "colossalai",
    "composer",
    "gpt-neox",
    "litgpt",
    "nemo",
    "olmo",
    "pytorch-lightning",
    "slime",
    "torchrec",
    "torchtune",
)
# The split of the other projects: this many drawn into the tuning half with this seed.
SPLIT_SEED = 35
TUNING_DRAWN = 7
# Test-half projects whose findings led to a change (each then replaced by a spare).
# Second round of issue 35: accelerate's `save_state` (deepspeed-examples,
# peft), a chain through a callee's test of a passed argument (olmo-core),
# comprehension targets named like ranks (nemo-rl), programs at module level
# (pytorch-examples, alpa).
# Issue 37: a Ray driver loop that dispatches its steps to worker groups (roll,
# round 1); helpers that return early on most steps and `last_step` flags
# (modded-nanogpt, round 2).
MOVED: tuple[str, ...] = (
    "deepspeed-examples",
    "peft",
    "olmo-core",
    "nemo-rl",
    "pytorch-examples",
    "alpa",
    "roll",
    "modded-nanogpt",
)
# Fresh projects added to the test half beyond the replacements (issue 37: roll,
# which moved, held two thirds of the test half's RNK201 findings; round 3
# grew the test half again).
GROWN = 6


def halves(round_index: int = -1) -> dict[str, list[str]]:
    """The tuning and the test half (sorted names) of a round of ``TEST_ROUNDS``
    (default: the last): that round's fresh projects are the test half, every
    project known before it the tuning half."""
    position = range(len(TEST_ROUNDS))[round_index]
    test = TEST_ROUNDS[position]
    later = {name for fresh in TEST_ROUNDS[position + 1 :] for name in fresh}
    return {
        "tuning": sorted(name for name in PROJECTS if name not in test and name not in later),
        "test": sorted(test),
    }


def round3_halves() -> dict[str, list[str]]:
    """The halves of issue 35 to the third round of issue 37, from the recorded seed."""
    fresh = sorted(
        name
        for name in PROJECTS
        if name not in TUNED_BEFORE and name not in SPARES and name not in FRESH
    )
    drawn = random.Random(SPLIT_SEED).sample(fresh, TUNING_DRAWN)
    tuning = [*TUNED_BEFORE, *drawn, *MOVED]
    test = [name for name in fresh if name not in tuning]
    spares = [name for name in SPARES if name not in tuning]
    test += spares[: len(MOVED) + GROWN]
    return {"tuning": sorted(tuning), "test": sorted(test)}


# Exported besides ``*.py``: files that mark a project's root.
ROOT_MARKERS = frozenset({"pyproject.toml", "setup.cfg", "setup.py"})
# Written into each exported tree: the commit it holds (a changed pin re-exports).
COMMIT_MARKER = ".corpus-commit"
# --rules choice -> Config.select (None: the default selection).
RULE_SETS: dict[str, tuple[str, ...] | None] = {"default": None, "all": ("ALL",)}


class BuildError(Exception):
    """A project's sources could not be exported."""


@dataclass
class ProjectRun:
    name: str
    rules: str
    seconds: float
    result: LintResult


def _git(args: Sequence[str], *, git_dir: Path | None = None, timeout: float = 1800) -> str:
    command = ["git", *(["--git-dir", str(git_dir)] if git_dir is not None else []), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        raise BuildError(f"{' '.join(command)}: {message}")
    return done.stdout


def mirror_dir(mirror_root: Path, repo: str) -> Path:
    """The bare mirror of ``owner/name`` under ``mirror_root``."""
    base = mirror_root / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file():
            return candidate
    raise BuildError(f"{repo}: no git directory at {base}")


def clone(repo: str, commit: str, target: Path) -> Path:
    """A blobless clone of ``repo`` with ``commit`` checked out; its git directory."""
    if not (target / ".git").is_dir():
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{repo}"
        _git(["clone", "--quiet", "--filter=blob:none", "--no-checkout", url, str(target)])
    git_dir = target / ".git"
    try:
        _git(["cat-file", "-e", f"{commit}^{{commit}}"], git_dir=git_dir)
    except BuildError:  # not on a branch any more: ask for it by id
        _git(["fetch", "--quiet", "--filter=blob:none", "origin", commit], git_dir=git_dir)
    # Checking out fetches the commit's blobs in one batch (an archive would
    # fetch them one by one).
    _git(["-C", str(target), "checkout", "--quiet", "--detach", commit])
    return git_dir


def wanted(path: str) -> bool:
    return path.endswith(".py") or path.rsplit("/", 1)[-1] in ROOT_MARKERS


def export(git_dir: Path, commit: str, target: Path) -> list[str]:
    """Write the wanted regular files of ``commit`` under ``target`` (replaced whole).

    Blobs are read with one ``git cat-file --batch`` rather than ``git
    archive``, which fails on the first blob a mirror lacks (mirrors may leave
    out big data files) even when that blob is filtered out. Returns the
    wanted paths whose blobs are missing (not written).
    """
    listing = _git(["ls-tree", "-r", "-z", "--full-tree", commit], git_dir=git_dir)
    entries: list[tuple[str, str]] = []  # (object id, path)
    for line in filter(None, listing.split("\0")):
        meta, path = line.split("\t", 1)
        mode, kind, oid = meta.split()
        # Regular files only: no symlinks (120000), no submodules (commits).
        if kind == "blob" and mode in ("100644", "100755") and wanted(path):
            entries.append((oid, path))
    if not any(path.endswith(".py") for _, path in entries):
        raise BuildError(f"{commit}: no Python files")
    command = ["git", "--git-dir", str(git_dir), "cat-file", "--batch"]
    request = "".join(f"{oid}\n" for oid, _ in entries).encode()
    done = subprocess.run(command, input=request, capture_output=True, timeout=1800)
    if done.returncode != 0:
        raise BuildError(f"git cat-file: {done.stderr.decode(errors='replace').strip()}")
    partial = target.with_name(target.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    missing: list[str] = []
    data = done.stdout
    offset = 0
    for oid, path in entries:
        newline = data.index(b"\n", offset)
        header = data[offset:newline].decode().split()
        offset = newline + 1
        if header[1:] == ["missing"]:
            missing.append(path)
            continue
        if header[0] != oid or header[1] != "blob":
            raise BuildError(f"git cat-file: unexpected answer {header} for {oid}")
        size = int(header[2])
        destination = partial.joinpath(*path.split("/"))
        if ".." in path.split("/") or not destination.is_relative_to(partial):
            raise BuildError(f"{commit}: unsafe path {path!r}")
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(data[offset : offset + size])
        offset += size + 1  # the content is followed by a newline
    (partial / COMMIT_MARKER).write_text(commit + "\n")
    if target.exists():
        shutil.rmtree(target)
    partial.rename(target)
    return missing


def build(names: Sequence[str], cache: Path, mirror_root: Path | None) -> list[str]:
    """Export each project and write the manifest; returns the failures."""
    failures: list[str] = []
    manifest: list[dict[str, object]] = []
    for name in names:
        repo, commit = PROJECTS[name]
        target = cache / "src" / name
        marker = target / COMMIT_MARKER
        if not (marker.is_file() and marker.read_text().strip() == commit):
            start = time.perf_counter()
            try:
                if mirror_root is not None:
                    git_dir = mirror_dir(mirror_root, repo)
                else:
                    git_dir = clone(repo, commit, cache / "git" / name)
                missing = export(git_dir, commit, target)
            except (BuildError, subprocess.TimeoutExpired, OSError) as exc:
                failures.append(f"{name}: {exc}")
                continue
            print(f"exported {name} in {time.perf_counter() - start:.1f}s", file=sys.stderr)
            if missing:
                failures.append(f"{name}: blobs missing from the source, not exported: {missing}")
        files = [path for path in target.rglob("*.py") if path.is_file()]
        manifest.append(
            {
                "name": name,
                "repo": repo,
                "commit": commit,
                "py_files": len(files),
                "bytes": sum(path.stat().st_size for path in files),
            }
        )
    manifest_path = cache / "manifest.json"
    # Projects built earlier but not named this time stay in the manifest.
    if manifest_path.is_file():
        built = {entry["name"] for entry in manifest}
        previous = json.loads(manifest_path.read_text())
        manifest.extend(
            entry
            for entry in previous
            if entry["name"] not in built
            and PROJECTS.get(entry["name"], (None, None))[1] == entry["commit"]
        )
    manifest.sort(key=lambda entry: str(entry["name"]))
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    print(manifest_table(manifest))
    return failures


def manifest_table(manifest: Sequence[dict[str, object]]) -> str:
    lines = [f"{'project':<18} {'repo':<31} {'commit':<40} {'files':>6} {'MB':>7}"]
    for entry in manifest:
        megabytes = int(str(entry["bytes"])) / 1e6
        lines.append(
            f"{entry['name']!s:<18} {entry['repo']!s:<31} {entry['commit']!s:<40} "
            f"{entry['py_files']!s:>6} {megabytes:>7.1f}"
        )
    return "\n".join(lines)


def lint(
    names: Sequence[str], rule_sets: Sequence[str], cache: Path, jobs: int, out: Path | None
) -> tuple[list[ProjectRun], list[str]]:
    """Lint each exported project with each rule set; also returns the projects missing."""
    runs: list[ProjectRun] = []
    missing: list[str] = []
    src = cache / "src"
    sink = out.open("w") if out is not None else None
    try:
        for name in names:
            source = src / name
            if not source.is_dir():
                missing.append(name)
                continue
            for rules in rule_sets:
                start = time.perf_counter()
                # Every tier: each record says its own (the default run shows `high`).
                config = Config(select=RULE_SETS[rules], root=source.absolute(), confidence="low")
                result = lint_paths([source], config, jobs=jobs)
                seconds = time.perf_counter() - start
                runs.append(ProjectRun(name, rules, seconds, result))
                print(f"linted {name} ({rules}) in {seconds:.1f}s", file=sys.stderr)
                if sink is not None:
                    for finding in result.findings:
                        record = finding_record(finding, name, rules, src)
                        sink.write(json.dumps(record) + "\n")
                    sink.flush()
    finally:
        if sink is not None:
            sink.close()
    return runs, missing


def finding_record(finding: Finding, project: str, rules: str, src: Path) -> dict[str, object]:
    return {
        "rules": rules,
        "project": project,
        "path": relative(finding.path, src),
        "line": finding.line,
        "col": finding.col,
        "end_line": finding.end_line,
        "end_col": finding.end_col,
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "confidence": finding.confidence.value,
        "evidence": {
            aspect: f"{link.kind} ({link.confidence.value}): {link.detail}"
            for aspect, link in (finding.evidence.links() if finding.evidence else [])
        },
        "trace": [
            {
                "path": relative(step.path, src),
                "line": step.line,
                "col": step.col,
                "message": step.message,
            }
            for step in finding.trace
        ],
    }


def relative(path: str, src: Path) -> str:
    """``path`` relative to ``src`` in POSIX form (unchanged when outside it)."""
    try:
        return Path(path).absolute().relative_to(src.absolute()).as_posix()
    except ValueError:
        return path


def report(runs: Sequence[ProjectRun]) -> str:
    """Findings per code per project, one table per rule set, then internal errors."""
    lines: list[str] = []
    for rules in dict.fromkeys(r.rules for r in runs):
        chosen = [r for r in runs if r.rules == rules]
        codes = sorted({f.code for r in chosen for f in r.result.findings})
        lines.append(f"rules: {rules}")
        lines.append(
            f"{'project':<18} {'files':>6} {'seconds':>8} {'errors':>6} {'total':>6} "
            + " ".join(f"{code:>7}" for code in codes)
        )
        for r in chosen:
            counts = Counter(f.code for f in r.result.findings)
            lines.append(
                f"{r.name:<18} {r.result.files_checked:>6} {r.seconds:>8.1f} "
                f"{len(r.result.errors):>6} {len(r.result.findings):>6} "
                + " ".join(f"{counts.get(c, 0):>7}" for c in codes)
            )
        total = Counter(f.code for r in chosen for f in r.result.findings)
        lines.append(
            f"{'total':<18} {sum(r.result.files_checked for r in chosen):>6} "
            f"{sum(r.seconds for r in chosen):>8.1f} "
            f"{sum(len(r.result.errors) for r in chosen):>6} {total.total():>6} "
            + " ".join(f"{total.get(c, 0):>7}" for c in codes)
        )
        lines.append("")
    for r in runs:
        lines.extend(f"internal error ({r.rules}): {e.describe()}" for e in r.result.errors)
    return "\n".join(lines).rstrip()


def _findings_of(path: Path, prefix: str) -> set[tuple[str, str, int]]:
    found = set()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["code"].startswith(prefix):
                found.add((record["code"], record["path"], record["line"]))
    return found


def compare(before_path: Path, after_path: Path, prefix: str) -> str:
    """Findings per code before and after, then the ones that appeared or went."""
    before, after = _findings_of(before_path, prefix), _findings_of(after_path, prefix)
    codes = sorted({code for code, _, _ in before | after})
    lines = ["| code | before | after | gone | new |", "| --- | ---: | ---: | ---: | ---: |"]
    for code in codes:
        b = {f for f in before if f[0] == code}
        a = {f for f in after if f[0] == code}
        lines.append(f"| {code} | {len(b)} | {len(a)} | {len(b - a)} | {len(a - b)} |")
    lines.append("")
    lines += [f"gone: {code} {path}:{line}" for code, path, line in sorted(before - after)]
    lines += [f"new:  {code} {path}:{line}" for code, path, line in sorted(after - before)]
    return "\n".join(lines)


def sample(path: Path, prefix: str, per_code: int, seed: int) -> str:
    """At most ``per_code`` findings of each code, drawn with ``seed``, as a review table."""
    by_code: dict[str, list[dict[str, object]]] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if str(record["code"]).startswith(prefix):
                by_code.setdefault(str(record["code"]), []).append(record)
    out: list[str] = []
    for code in sorted(by_code):
        records = sorted(by_code[code], key=lambda r: (str(r["path"]), int(str(r["line"]))))
        chosen = records
        if len(records) > per_code:
            chosen = sorted(
                random.Random(f"{seed}:{code}").sample(records, per_code),
                key=lambda r: (str(r["path"]), int(str(r["line"]))),
            )
        drawn = "all" if chosen is records else f"{per_code} drawn with seed {seed}"
        out += [f"### {code}: {len(records)} findings, {drawn}", ""]
        out += ["| # | finding | message | verdict |", "| ---: | --- | --- | --- |"]
        for index, record in enumerate(chosen, 1):
            message = str(record["message"]).replace("|", "\\|")
            out.append(f"| {index} | `{record['path']}:{record['line']}` | {message} | |")
        out.append("")
    return "\n".join(out).rstrip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("halves", "build", "lint", "compare", "sample"))
    parser.add_argument(
        "files",
        nargs="*",
        type=Path,
        help="compare: BEFORE.jsonl AFTER.jsonl; sample: FINDINGS.jsonl (from lint --out)",
    )
    parser.add_argument(
        "--prefix", default="RNK1", help="compare, sample: codes starting with this (default RNK1)"
    )
    parser.add_argument("--per-code", type=int, default=30, help="sample: most per code")
    parser.add_argument("--seed", type=int, default=16, help="sample: random seed")
    parser.add_argument("--cache", type=Path, default=Path(".cache/corpus"))
    parser.add_argument("--project", action="append", choices=sorted(PROJECTS))
    parser.add_argument("--half", choices=("tuning", "test"), help="the projects of one half")
    parser.add_argument(
        "--round",
        type=int,
        default=-1,
        help="the halves of this entry of TEST_ROUNDS (0: round 4; default: the last)",
    )
    parser.add_argument(
        "--mirror-root", type=Path, help="read commits from local bare mirrors (build)"
    )
    parser.add_argument(
        "--rules", action="append", choices=sorted(RULE_SETS), help="rule sets (lint; default both)"
    )
    parser.add_argument(
        "--select",
        help="lint: these comma-separated codes instead of the rule sets (`RNK201,RNK202`)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes (lint)")
    parser.add_argument("--out", type=Path, help="write findings as JSON lines (lint)")
    args = parser.parse_args()
    split = halves(args.round)
    if args.action == "halves":
        for half, members in split.items():
            print(f"{half} ({len(members)}): {' '.join(members)}")
        return 0
    names = args.project or (split[args.half] if args.half else sorted(PROJECTS))
    if args.action == "compare":
        if len(args.files) != 2:
            parser.error("compare needs BEFORE.jsonl AFTER.jsonl")
        print(compare(args.files[0], args.files[1], args.prefix))
        return 0
    if args.action == "sample":
        if len(args.files) != 1:
            parser.error("sample needs FINDINGS.jsonl")
        print(sample(args.files[0], args.prefix, args.per_code, args.seed))
        return 0
    if args.action == "build":
        failures = build(names, args.cache, args.mirror_root)
        for failure in failures:
            print(f"failed: {failure}")
        return 1 if failures else 0
    rule_sets = list(dict.fromkeys(args.rules or RULE_SETS))
    if args.select:
        codes = tuple(code.strip() for code in args.select.split(",") if code.strip())
        RULE_SETS[args.select] = codes
        rule_sets = [args.select]
    runs, missing = lint(names, rule_sets, args.cache, args.jobs, args.out)
    print(report(runs))
    for name in missing:
        print(f"skipped, not built (run build first): {name}")
    return 1 if any(r.result.errors for r in runs) or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
