"""RNK502 hard-coded-credential."""

from __future__ import annotations

import re

import libcst as cst

from ranklint.analysis.walk.literals import environ_writes, string_value
from ranklint.findings import Confidence, Evidence, Link, Severity
from ranklint.rules.portability._string_rules import _StringRule

_SECRET_NAME = re.compile(
    r"(?i)(?:^|_)(?:token|api_?key|secret(?:_key)?|password|passwd|access_key|auth)$"
)

_SECRET_KEYWORDS = frozenset(
    {"token", "api_key", "apikey", "password", "secret", "hf_token", "auth_token", "access_token"}
)


def _token(pattern: str) -> re.Pattern[str]:
    """A token that starts a word: `mask-offpolicy-...` holds `sk-...` but is no key."""
    return re.compile(r"(?<![A-Za-z0-9_\-])" + pattern)


_TOKEN_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = (
    (_token(r"hf_[A-Za-z0-9]{30,}"), "a Hugging Face token"),
    (_token(r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}"), "an API secret key"),
    (_token(r"gh[pousr]_[A-Za-z0-9]{30,}"), "a GitHub token"),
    (_token(r"github_pat_[A-Za-z0-9_]{30,}"), "a GitHub token"),
    (_token(r"xox[abprs]-[A-Za-z0-9\-]{10,}"), "a Slack token"),
    (_token(r"AKIA[0-9A-Z]{16}"), "an AWS access key"),
    (_token(r"glpat-[A-Za-z0-9_\-]{20,}"), "a GitLab token"),
    (_token(r"AIza[0-9A-Za-z_\-]{35}"), "a Google API key"),
)

_PLACEHOLDER_WORDS = (
    r"(?i)your|xxx|<|\$\{|changeme|dummy|fake|example|placeholder|test|\*\*\*|\.\.\.|none|null"
)
# A value under a secret's name that names what it stands for (`"super-secret-token"`).
_PLACEHOLDER = re.compile(_PLACEHOLDER_WORDS + r"|secret|token|passw")
# In a prefixed token only the words of a placeholder count: a real token's
# random tail may hold `token` or `secret` by chance no more than any word.
_PLACEHOLDER_PREFIXED = re.compile(_PLACEHOLDER_WORDS)


HIGH, MEDIUM = Confidence.HIGH, Confidence.MEDIUM


class HardCodedCredential(_StringRule):
    code = "RNK502"
    name = "hard-coded-credential"
    severity = Severity.ERROR
    summary = "A secret (token, API key, password) is written in code"
    what = """\
Reports string literals assigned to names, attributes, keyword arguments or
environment variables that name a secret (`*_TOKEN`, `*_API_KEY`,
`*_SECRET`, `*_PASSWORD`, `WANDB_API_KEY`, `HF_TOKEN`, `token=`,
`api_key=`, ...), and string literals anywhere with a well-known token
prefix (Hugging Face `hf_`, `sk-` API keys, GitHub, Slack, AWS, GitLab,
Google). Values that do not look like secrets are not reported: shorter than
8 characters, placeholders (`"<your-token>"`, `"changeme"`, `"dummy"`, and
under a secret's name a value that says what it stands for:
`"super-secret-token"`), variable names (`ENV_TOKEN = "GITHUB_TOKEN"`),
snake_case identifiers (`"int8_asym_per_token"`), letters between
punctuation (a vocabulary's `"@@PADDING@@"`, `"<|endoftext|>"`), text with
spaces, or letters only. In test files only the prefixed tokens are reported. The message never
repeats the secret.
"""
    why = """\
A token in code is a token in every clone, fork, wheel, container image and CI
log of the repository, and in its history after it is deleted. Training
infrastructure tokens (Hugging Face write tokens, experiment trackers, cloud
keys) give access to models, data and compute. Read secrets from the
environment or a secret manager at run time.
"""
    limits = """\
Secrets under names that do not say so, and prefixes other than the listed
ones, are not recognised. Short values (under 8 characters) are taken for
placeholders.
"""
    valid = (
        """
        import os

        HF_TOKEN = os.environ.get("HF_TOKEN")
        WANDB_API_KEY = ""
        api_key = "<your-api-key>"
        """,
        """
        # A flag that holds `sk-` inside a word is no key (shape of
        # slime/utils/arguments.py: `--mask-offpolicy-in-partial-rollout`).
        def add_flags(parser):
            parser.add_argument("--mask-offpolicy-in-partial-rollout", action="store_true")
        """,
    )
    invalid = (
        """
        import os

        HF_TOKEN = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # expect: RNK502
        os.environ["WANDB_API_KEY"] = "3f9a1c0d7e6b5a4f3e2d1c0b"  # expect: RNK502(medium)


        def login(client):
            client.connect(password="s3cr3t-pa55w0rd")  # expect: RNK502(medium)
        """,
    )
    tiers = """\
Each finding records what makes the string a secret (**source**):

- `token-prefix` (high): the value has a well-known token prefix and shape
  (`hf_...`, `sk-...`, `ghp_...`, `AKIA...`): a secret wherever it stands.
- `secret-name` (medium): only the name says so (`*_TOKEN`, `api_key=`,
  `password=`). In ML code a "token" is often a vocabulary entry
  (`PAD_TOKEN = "@@PADDING@@"`) or a mode (`"int8_asym_per_token"`), and
  demo code uses made-up values; those shapes are left out, but a name alone
  is not enough for the default run.
"""

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._named(_last_identifier(target.target), node.value)
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            if value is not None:
                self._named(key, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._named(_last_identifier(node.target), node.value)

    def visit_Call(self, node: cst.Call) -> None:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value.lower() in _SECRET_KEYWORDS:
                self._named(arg.keyword.value, arg.value)
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            if value is not None:
                self._named(key, value)

    def _named(self, name: str | None, value: cst.BaseExpression) -> None:
        # Every name of `_SECRET_KEYWORDS` matches `_SECRET_NAME` too.
        if name is None or self.ctx.is_test or not _SECRET_NAME.search(name):
            return
        literal = string_value(value)
        if literal is None:
            return
        kind = _prefixed(literal)
        if kind is None and not _looks_secret(literal):
            return
        self._skip.add(id(value))
        if kind is not None:
            source = _prefix_link(kind)
        else:
            source = Link("secret-name", f"`{name}` names a secret", MEDIUM)
        self.report(
            value,
            f"`{name}` is given a literal secret: it ships with every copy of this code and "
            f"stays in the history; read it from the environment or a secret store at run time",
            evidence=Evidence(source=source),
        )

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node):
            return
        value = string_value(node)
        if value is None or len(value) > 200:
            return
        kind = _prefixed(value)
        if kind is not None:
            self._skip.add(id(node))
            self.report(
                node,
                f"this string looks like {kind}: a secret in code ships with every copy "
                f"and stays in the history; revoke it and read it from the environment",
                evidence=Evidence(source=_prefix_link(kind)),
            )


def _prefix_link(kind: str) -> Link:
    return Link("token-prefix", f"the value looks like {kind}", HIGH)


def _prefixed(value: str) -> str | None:
    """What kind of token ``value`` holds by its prefix, if any (not a placeholder)."""
    if _PLACEHOLDER_PREFIXED.search(value):
        return None
    for pattern, kind in _TOKEN_PREFIXES:
        if pattern.search(value):
            return kind
    return None


_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# A snake_case identifier (`int8_asym_per_token`): a mode or a key, not a secret.
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _looks_secret(value: str) -> bool:
    """Long enough, no placeholder, not a variable name (``"GITHUB_TOKEN"``) or a
    snake_case identifier, no spaces, and not letters alone between punctuation
    (``"@@PADDING@@"``, ``"<|endoftext|>"``: a vocabulary's special tokens)."""
    return (
        len(value) >= 8
        and not _PLACEHOLDER.search(value)
        and not _ENV_NAME.fullmatch(value)
        and not _SNAKE_CASE.fullmatch(value)
        and not any(character.isspace() for character in value)
        # Letters alone, or letters between punctuation (`"@@PADDING@@"`), are no secret.
        and not "".join(filter(str.isalnum, value)).isalpha()
    )


def _last_identifier(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None
