"""The hand-written type stubs (edgegan/__init__.pyi) name exactly what the extension
module defines: every public function, class, method and property."""

import ast
import inspect
import pathlib

import edgegan

STUB = pathlib.Path(edgegan.__file__).with_name("__init__.pyi")


def stub_tree():
    return ast.parse(STUB.read_text())


def test_stub_is_installed_beside_the_module():
    assert STUB.exists()
    assert STUB.with_name("py.typed").exists()


def test_every_public_name_is_in_the_stub():
    tree = stub_tree()
    defined = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            defined.add(node.target.id)
    assert set(edgegan.__all__) <= defined


def test_classes_match_the_stub():
    classes = {node.name: node for node in stub_tree().body if isinstance(node, ast.ClassDef)}
    for name in ("Model", "Session", "Trainer", "ImageToImage"):
        runtime = {n for n in dir(getattr(edgegan, name)) if not n.startswith("_")}
        stubbed = {n.name for n in classes[name].body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
        assert runtime == stubbed, name


def test_every_public_callable_has_a_docstring():
    for name in edgegan.__all__:
        value = getattr(edgegan, name)
        if inspect.isclass(value) or callable(value):
            assert value.__doc__, name
    for cls in (edgegan.Model, edgegan.Session, edgegan.Trainer, edgegan.ImageToImage):
        for name, member in vars(cls).items():
            if not name.startswith("_") and callable(member):
                assert member.__doc__, f"{cls.__name__}.{name}"
