"""openapi.yaml loaded as strictly as a code generator reads it.

PyYAML's `safe_load` keeps the last of two equal keys in a mapping without a word, so a response
listed twice under one status looked fine here while YAML 1.2 (and swift-openapi-generator's
parser) calls the document invalid. `load()` refuses any mapping with a key given twice.
`generator_problems()` names the schema constructs that swift-openapi-generator skips or
misreads (see the head of openapi.yaml). Run as a script it loads openapi.yaml and checks both
(scripts/api-check's first step).
"""
import sys
from pathlib import Path

import yaml

PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"


class DuplicateKeyRefusingLoader(yaml.SafeLoader):
    """SafeLoader whose mappings refuse a key given twice."""

    def construct_mapping(self, node, deep=False):
        first_seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in first_seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found the key {key!r} a second time (first on line {first_seen[key]})", key_node.start_mark)
            first_seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def load(path=PATH):
    with open(path, encoding="utf-8") as file:
        return yaml.load(file, Loader=DuplicateKeyRefusingLoader)


def generator_problems(document):
    """Where the document uses `not`, puts `properties` beside a composition, writes a
    nullable value as a composition with `{type: 'null'}`, or an always-null member as
    `type: 'null'`: a generated client skips the first schema, drops the properties of the
    second, cannot decode the third and drops the fourth (then refuses the answer that has it)."""
    problems = []

    def walk(node, path):
        if isinstance(node, list):
            for index, child in enumerate(node):
                walk(child, f"{path}/{index}")
            return
        if not isinstance(node, dict):
            return
        if "not" in node:
            problems.append(f"{path}: `not`")
        compositions = [key for key in ("allOf", "anyOf", "oneOf") if key in node]
        if compositions and "properties" in node:
            problems.append(f"{path}: `properties` beside `{compositions[0]}`")
        for key in ("anyOf", "oneOf"):
            if any(isinstance(part, dict) and part.get("type") == "null" for part in node.get(key, [])):
                problems.append(f"{path}: a nullable value as `{key}` with {{type: 'null'}}")
        for name, member in (node.get("properties") or {}).items():
            if isinstance(member, dict) and member.get("type") == "null":
                problems.append(f"{path}/properties/{name}: `type: 'null'` (say `const: null`)")
        for key, child in node.items():
            if key not in ("example", "examples"):
                walk(child, f"{path}/{key}")

    walk(document.get("paths", {}), "#/paths")
    walk(document.get("components", {}), "#/components")
    return problems


if __name__ == "__main__":
    try:
        document = load()
    except yaml.YAMLError as error:
        print(f"openapi.yaml is not valid YAML: {error}")
        sys.exit(1)
    problems = generator_problems(document)
    for problem in problems:
        print(f"openapi.yaml: generators cannot use {problem}")
    if problems:
        sys.exit(1)
    print(f"openapi.yaml: valid YAML, no key twice, nothing generators skip ({len(document['paths'])} paths, "
          f"{len(document['components']['schemas'])} schemas)")
