"""Compares openapi.yaml with Core's attribute catalogue.

Sources/KeychainCore/Attribute.swift (names, types, classes, read-only flags) and
Enumeration.swift (enumerated values and aliases) are the truth; openapi.yaml repeats them per
class in four places: the answer schema (`<Class>Item`, whose `dependentRequired` must tie every
attribute to `persistentRef`), the add body (`<Class>New`), the update body (`<Class>Changes`),
each of their variants when the body is a `oneOf`, and the query parameters of GET, PATCH and
DELETE. Any difference is printed and the exit status is 1. Run by scripts/api-check; needs
PyYAML.
"""
import re
import sys
from pathlib import Path

import openapi_document

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ["genericPassword", "internetPassword", "certificate", "key", "identity"]
STORED = CLASSES[:4]
GROUPS = {"every": set(STORED), "passwords": {"genericPassword", "internetPassword"}}
SECRET_KEYS = {"value", "data", "certificate", "privateKey", "key", "persistentRef", "return"}


def swift_catalogue():
    text = (ROOT / "Sources/KeychainCore/Attribute.swift").read_text()
    attributes = []
    pattern = re.compile(
        r'Attribute\(\s*"(\w+)",\s*"([^"]+)",\s*\.(\w+)(?:\(\.(\w+)\))?,\s*(every|passwords|\[[^\]]*\])([^)]*)\)')
    for name, _code, kind, enum, classes, rest in pattern.findall(text):
        if classes in GROUPS:
            members = GROUPS[classes]
        else:
            members = set(re.findall(r"\.(\w+)", classes))
        attributes.append({
            "name": name, "type": enum if kind == "enumeration" else kind, "enum": kind == "enumeration",
            "classes": members, "readOnly": "readOnly: true" in rest})
    enums = {}
    text = (ROOT / "Sources/KeychainCore/Enumeration.swift").read_text()
    for name, values, aliases in re.findall(
            r'Enumeration\(\s*name:\s*"(\w+)",\s*values:\s*\[(.*?)\],\s*aliases:\s*\[(.*?)\]\)', text, re.S):
        enums[name] = (re.findall(r'\("([^"]+)",\s*"[^"]*"\)', values), sorted(re.findall(r'"(\w+)":', aliases)))
    return attributes, enums


def belongs(attribute, item_class):
    if item_class == "identity":
        return bool(attribute["classes"] & {"certificate", "key"})
    return item_class in attribute["classes"]


def title(name):
    return name[0].upper() + name[1:]


def main():
    attributes, enums = swift_catalogue()
    if len(attributes) < 40 or len(enums) < 7:
        print(f"api catalogue: could not read the Swift catalogue ({len(attributes)} attributes, {len(enums)} enumerations)")
        return 1
    spec = openapi_document.load()
    schemas = spec["components"]["schemas"]
    parameters = spec["components"]["parameters"]
    problems = []

    def ref_name(schema):
        return schema.get("$ref", "").rsplit("/", 1)[-1]

    def variants(name):
        """The schema's own name, or the names of its oneOf variants (a body whose secret is
        `value` or `data` is one variant per way)."""
        return [ref_name(variant) for variant in schemas[name]["oneOf"]] if "oneOf" in schemas[name] else [name]

    def expected_ref(attribute, mode):
        kind = attribute["type"]
        if attribute["enum"]:
            base = title(kind)
            return base + "Input" if mode != "answer" and base + "Input" in schemas else base
        return {"data": "Base64", "integer": "Int64", "date": "DateAnswer" if mode == "answer" else "DateInput"}.get(kind)

    def check_type(where, attribute, schema, mode):
        if attribute["name"] == "synchronizable" and mode == "query":
            ok = schema.get("enum") == ["true", "false", "any"]
        elif attribute["type"] in ("string", "bool"):
            ok = schema.get("type") == {"string": "string", "bool": "boolean"}[attribute["type"]]
        else:
            ok = ref_name(schema) == expected_ref(attribute, mode)
        if not ok:
            problems.append(f"{where}: {attribute['name']} is {attribute['type']} in Core, not {schema}")

    for enum, (values, aliases) in enums.items():
        if schemas.get(title(enum), {}).get("enum") != values:
            problems.append(f"schema {title(enum)}: values differ from Enumeration.{enum}")
        if aliases and schemas.get(title(enum) + "Input", {}).get("enum") != values + aliases:
            problems.append(f"schema {title(enum)}Input: values and aliases differ from Enumeration.{enum}")

    for item_class in CLASSES:
        own = [a for a in attributes if belongs(a, item_class)]
        by_name = {a["name"]: a for a in own}
        answered = [a for a in own if item_class != "identity" or "certificate" in a["classes"]]
        properties = schemas[title(item_class) + "Item"]["properties"]
        if set(properties) - SECRET_KEYS != {a["name"] for a in answered}:
            problems.append(f"{title(item_class)}Item: properties {sorted(set(properties) - SECRET_KEYS)} "
                            f"differ from Core's {sorted(a['name'] for a in answered)}")
        for a in answered:
            if a["name"] in properties:
                check_type(f"{title(item_class)}Item", a, properties[a["name"]], "answer")
        writable = {a["name"] for a in own if not a["readOnly"]}
        together = schemas[title(item_class) + "Item"].get("dependentRequired", {})
        unreferenced = {a["name"] for a in answered if together.get(a["name"]) != ["persistentRef"]}
        if unreferenced:
            problems.append(f"{title(item_class)}Item: dependentRequired lacks persistentRef for {sorted(unreferenced)}")
        for body in ("New", "Changes"):
            for variant in variants(title(item_class) + body):
                properties = schemas[variant]["properties"]
                if set(properties) - SECRET_KEYS != writable:
                    problems.append(f"{variant}: properties differ from Core's writable attributes: "
                                    f"{sorted(set(properties) ^ writable - SECRET_KEYS)}")
                for name in set(properties) & writable:
                    check_type(variant, by_name[name], properties[name], "input")
        for method in ("get", "patch", "delete"):
            operation = spec["paths"][f"/v1/items/{item_class}"][method]
            names = set()
            for parameter in operation["parameters"]:
                resolved = parameters[ref_name(parameter)]
                if resolved["name"] in by_name:
                    names.add(resolved["name"])
                    check_type(f"{method.upper()} /v1/items/{item_class}", by_name[resolved["name"]],
                               resolved["schema"], "query")
            if names != set(by_name):
                problems.append(f"{method.upper()} /v1/items/{item_class}: query attributes differ from Core: "
                                f"{sorted(names ^ set(by_name))}")
    for problem in problems:
        print(f"api catalogue: {problem}")
    if not problems:
        print(f"api catalogue: openapi.yaml matches Core ({len(attributes)} attributes, {len(enums)} enumerations)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
