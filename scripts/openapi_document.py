"""openapi.yaml loaded as strictly as a code generator reads it.

PyYAML's `safe_load` keeps the last of two equal keys in a mapping without a word, so a response
listed twice under one status looked fine here while YAML 1.2 (and swift-openapi-generator's
parser) calls the document invalid. `load()` refuses any mapping with a key given twice.
Run as a script it loads openapi.yaml and says so (scripts/api-check's first step).
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


if __name__ == "__main__":
    try:
        document = load()
    except yaml.YAMLError as error:
        print(f"openapi.yaml is not valid YAML: {error}")
        sys.exit(1)
    print(f"openapi.yaml: valid YAML, no key twice ({len(document['paths'])} paths, "
          f"{len(document['components']['schemas'])} schemas)")
