"""The type stubs (python/tessel/__init__.pyi, _tessel.pyi) match the built module: every public
name has a stub and every stub names something real; each class's members (and whether each is
a property, a static or a plain method); each function's parameters, their order, kinds and
defaults, read from inspect.signature (Python) or pybind11's signature line (the extension).
"""

import ast
import inspect
import pathlib

import pytest

import tessel
import tessel._tessel as ext

PACKAGE = pathlib.Path(tessel.__file__).parent  # the stubs ship beside the module


def parse(name):
    path = PACKAGE / name
    assert path.exists(), f"no stub file {path}"
    return ast.parse(path.read_text(), filename=str(path))


def is_alias(node):
    """`_Model = Graph | str`: a type alias of the stub itself, not a name of the module."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and
            isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("_"))


def stub_names(tree):
    """Top-level name -> list of nodes (several for @overload)."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.setdefault(node.target.id, []).append(node)
        elif isinstance(node, ast.ImportFrom) and node.module == "_tessel" and node.level == 1:
            for alias in node.names:
                names.setdefault(alias.asname or alias.name, []).append(node)
        elif isinstance(node, ast.Assign) and not is_alias(node):
            for target in node.targets:
                names.setdefault(target.id, []).append(node)
    return names


def decorators(node):
    return {d.id if isinstance(d, ast.Name) else ast.unparse(d) for d in node.decorator_list}


def split_top_level(text):
    """Splits a pybind11 parameter list at the commas outside brackets and quotes."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


NO_DEFAULT = object()


def literal(text):
    try:
        return ast.literal_eval(text)
    except ValueError:
        return ("unevaluated", text)


def runtime_params(function, name, method):
    """[(name, kind, default)] with kind 'pos', 'kw' (keyword-only) or 'varkw'."""
    if inspect.isfunction(function):  # the package's Python wrappers
        kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
                 inspect.Parameter.KEYWORD_ONLY: "kw", inspect.Parameter.VAR_KEYWORD: "varkw"}
        return [(p.name, kinds[p.kind],
                 NO_DEFAULT if p.default is inspect.Parameter.empty else p.default)
                for p in inspect.signature(function).parameters.values()]
    line = function.__doc__.split("\n", 1)[0]
    assert line.startswith(name + "(") and ") -> " in line, f"{name}: no signature in {line!r}"
    params, kind = [], "pos"
    for part in split_top_level(line[len(name) + 1:line.rindex(") -> ")]):
        if part == "*":
            kind = "kw"
        elif part.startswith("**"):
            params.append((part[2:].split(":")[0], "varkw", NO_DEFAULT))
        else:
            head, _, default = part.partition(" = ")
            params.append((head.split(":")[0].strip(), kind,
                           literal(default) if default else NO_DEFAULT))
    return params[1:] if method else params  # pybind11 names `self` first


def stub_params(node, method):
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [NO_DEFAULT] * (len(positional) - len(args.defaults)) + [
        literal(ast.unparse(d)) for d in args.defaults]
    params = [(a.arg, "pos", d) for a, d in zip(positional, defaults)]
    params += [(a.arg, "kw", NO_DEFAULT if d is None else literal(ast.unparse(d)))
               for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        params.append((args.kwarg.arg, "varkw", NO_DEFAULT))
    annotated = [a for a in positional + args.kwonlyargs if a.arg != "self"]
    assert all(a.annotation is not None for a in annotated), f"{node.name}: unannotated"
    assert node.returns is not None, f"{node.name}: no return annotation"
    return params[1:] if method else params


def check_params(qualname, function, nodes, method):
    got = runtime_params(function, qualname.rsplit(".", 1)[-1], method)
    for node in nodes:
        want = stub_params(node, method)
        assert [(n, k) for n, k, _ in want] == [(n, k) for n, k, _ in got], qualname
        overload = "overload" in decorators(node)
        for (n, _, stub_default), (_, _, default) in zip(want, got):
            if stub_default is NO_DEFAULT and overload:
                continue  # an overload may require what the function defaults (sweep's summary)
            assert stub_default == default, f"{qualname}({n}): stub {stub_default}, {default}"


def check_class(cls, node):
    members = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members.setdefault(item.name, []).append(item)
        elif isinstance(item, ast.AnnAssign):
            members[item.target.id] = [item]
    public = {k for k in members if not k.startswith("__")}
    if issubclass(cls, BaseException):  # instance attributes: from a real instance
        assert public <= {"diagnostics"} and (not public or cls is tessel.InputError), cls
        if not public:
            return
        with pytest.raises(cls) as raised:
            tessel.HwConfig.from_dict({"name": 3})
        for name in public:
            assert hasattr(raised.value, name), f"{cls.__name__}.{name}"
        return
    runtime = {k for k in vars(cls) if not k.startswith("__")}
    assert public == runtime, f"{cls.__name__}: stub-only {public - runtime}, " \
                              f"unstubbed {runtime - public}"
    for name in public:
        value = vars(cls)[name]
        stub = members[name][0]
        if isinstance(value, property):
            assert "property" in decorators(stub), f"{cls.__name__}.{name} is a property"
        elif isinstance(value, staticmethod):
            assert "staticmethod" in decorators(stub), f"{cls.__name__}.{name} is static"
            check_params(f"{cls.__name__}.{name}", getattr(cls, name), members[name], False)
        else:
            assert not decorators(stub) & {"property", "staticmethod"}, f"{cls.__name__}.{name}"
            check_params(f"{cls.__name__}.{name}", value, members[name], True)


def test_the_extensions_stub_names_every_name_and_member():
    names = stub_names(parse("_tessel.pyi"))
    runtime = {n for n in dir(ext) if not (n.startswith("__") and n.endswith("__"))}
    runtime.add("__version__")
    assert set(names) == runtime, (f"stub-only {set(names) - runtime}, "
                                   f"unstubbed {runtime - set(names)}")
    for name, nodes in names.items():
        value = getattr(ext, name)
        if isinstance(nodes[0], ast.ClassDef):
            assert inspect.isclass(value), name
            check_class(value, nodes[0])
        elif isinstance(nodes[0], ast.FunctionDef):
            assert callable(value) and not inspect.isclass(value), name
            check_params(name, value, nodes, False)


def test_the_packages_stub_names_every_public_name_with_its_signature():
    public = {n for n in dir(tessel)
              if not n.startswith("_") and not inspect.ismodule(getattr(tessel, n))}
    assert set(tessel.__all__) == public, "__all__ is not the package's public names"
    names = stub_names(parse("__init__.pyi"))
    assert set(names) == public | {"__version__", "__all__"}, set(names) ^ public
    for name, nodes in names.items():
        if isinstance(nodes[0], ast.ImportFrom):  # re-exported: the extension's own object
            assert getattr(tessel, name) is getattr(ext, name), name
        elif isinstance(nodes[0], ast.FunctionDef):
            assert inspect.isfunction(getattr(tessel, name)), name
            check_params(name, getattr(tessel, name), nodes, False)


def test_the_stubs_ship_with_the_module():
    assert (PACKAGE / "py.typed").exists()  # PEP 561: type checkers read the stubs


def docstring(value):
    """The prose of a docstring: pybind11 puts the signature line first, properties have none."""
    text = (getattr(value, "__doc__", None) or "").strip()
    if isinstance(value, property) or inspect.isfunction(value) or inspect.isclass(value):
        return text
    return text.split("\n", 1)[1].strip() if "\n" in text else ""


def test_every_public_name_and_member_has_a_docstring():
    missing = [name for name in tessel.__all__ if not docstring(getattr(tessel, name))]
    for name in tessel.__all__:
        cls = getattr(tessel, name)
        if inspect.isclass(cls):
            for key, value in vars(cls).items():
                if isinstance(value, staticmethod):
                    value = getattr(cls, key)
                if not key.startswith("_") and not docstring(value):
                    missing.append(f"{name}.{key}")
    assert not missing, f"no docstring (help(tessel) shows nothing): {missing}"
