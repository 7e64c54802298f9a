"""An allow-list unpickler: a small pickle interpreter that can only build data.

NOTE [ Loading without running code ]
1. A pickle is a program for a stack machine; its GLOBAL opcode imports any
   name (``os.system``) and REDUCE calls it. ``pickle.load`` on a file from
   outside therefore runs whatever the file says.
2. This interpreter never imports anything. GLOBAL is looked up in an
   allow-list (``globals_``: (module, name) -> Allowed); any other name stops the
   load with "Weights only load failed ... Unsupported global: GLOBAL <module>.<name>".
3. REDUCE calls only ``Allowed`` callables (glassgrad's own rebuild functions),
   with a tuple of arguments. BUILD only sets attributes on an OrderedDict (a
   state_dict's ``_metadata``). SETITEM(S) only on dict/OrderedDict, APPEND(S)
   only on list. BINPERSID hands the id to ``persistent_load``.
4. Only the opcodes listed in ``_OPS`` are understood; any other opcode is an
   error naming it. Malformed data (truncation, a bad memo index, an unhashable
   key) becomes an UnpicklingError that says where in data.pkl it happened.
"""
from __future__ import annotations

import collections
import inspect
import pickle
import struct

from . import modules as _modules
from . import safe_globals as _safe

WEIGHTS_ONLY_HEADER = (
    "Weights only load failed. glassgrad loads checkpoints with an allow-list unpickler that never runs "
    "code from the file: it rebuilds tensors, storages, OrderedDicts, devices and dtypes and nothing else "
    "(PyTorch's torch.load(..., weights_only=True) does the same).\n\n")


class Allowed:
    """A global the file may name: ``fn`` is what REDUCE calls (None for a plain value)."""

    __slots__ = ("module", "name", "fn", "value", "sig")

    def __init__(self, module, name, fn=None, value=None):
        self.module, self.name, self.fn, self.value = module, name, fn, value
        self.sig = inspect.signature(fn) if fn is not None else None

    def call(self, args: tuple):
        try:
            self.sig.bind(*args)
        except TypeError as e:
            raise pickle.UnpicklingError(f"data.pkl calls {self!r} with {len(args)} arguments: {e}") from None
        try:
            return self.fn(*args)
        except Exception as e:  # noqa: BLE001 - the callee's own error, passed through unchanged
            raise _CalleeError(e) from None

    def __repr__(self):
        return f"{self.module}.{self.name}"


class _CalleeError(Exception):
    """Carries an exception raised by an allowed callable or persistent_load out of the interpreter."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


class _Trusted:
    """A global the program passed to add_safe_globals (NOTE [ Safe globals ])."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __repr__(self):
        return f"{getattr(self.obj, '__module__', '?')}.{getattr(self.obj, '__qualname__', '?')}"


class _ModuleClass:
    """An nn.Module class a ``weights_only=False`` load may make (NOTE [ Saving a whole module ] 3)."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def __repr__(self):
        return f"{self.cls.__module__}.{self.cls.__qualname__}"


class _Mark:
    __repr__ = lambda self: "MARK"  # noqa: E731


_MARK = _Mark()


class AllowListUnpickler:
    """``AllowListUnpickler(data, globals_, persistent_load).load()`` -> the object."""

    def __init__(self, data: bytes, globals_: dict, persistent_load, allow_modules: bool = False):
        self.data = memoryview(data)
        self.globals = globals_
        self.persistent_load = persistent_load
        self.allow_modules = allow_modules          # weights_only=False (NOTE [ Saving a whole module ] 3)

    def load(self):
        try:
            return self._run()
        except _CalleeError as e:
            raise e.exc from None
        except pickle.UnpicklingError:
            raise
        except (IndexError, KeyError, struct.error, TypeError, ValueError, UnicodeDecodeError,
                OverflowError, AttributeError) as e:
            raise pickle.UnpicklingError(
                f"data.pkl is corrupted: {type(e).__name__}: {e} (at byte {self.pos} of {len(self.data)})") from None

    # ---- helpers ----------------------------------------------------------
    def _take(self, n: int):
        p = self.pos
        if n < 0 or p + n > len(self.data):
            raise pickle.UnpicklingError(f"data.pkl is truncated: needed {n} bytes at byte {p} of {len(self.data)}")
        self.pos = p + n
        return self.data[p:p + n]

    def _line(self) -> str:
        end = bytes(self.data[self.pos:self.pos + 512]).find(b"\n")
        if end < 0:
            raise pickle.UnpicklingError(f"data.pkl is truncated: GLOBAL name not terminated at byte {self.pos}")
        s = bytes(self._take(end + 1)[:-1]).decode("ascii")
        return s

    def _pop_mark(self) -> list:
        st = self.stack
        for i in range(len(st) - 1, -1, -1):
            if st[i] is _MARK:
                items = st[i + 1:]
                del st[i:]
                return items
        raise pickle.UnpicklingError("data.pkl is corrupted: no MARK on the stack")

    def _global(self, module: str, name: str):
        g = self.globals.get((module, name))
        if g is None and _safe.lookup(module, name) is not None:     # NOTE [ Safe globals ]
            return _Trusted(_safe.lookup(module, name))
        if g is None:
            cls = _modules.resolve(module, name)
            if cls is not None and self.allow_modules:
                return _ModuleClass(cls)
            if cls is not None:
                raise pickle.UnpicklingError(
                    WEIGHTS_ONLY_HEADER + f"Unsupported global: GLOBAL {module}.{name}: the file holds a whole "
                    "module. Load it with torch.load(f, weights_only=False) (glassgrad then rebuilds only nn.Module "
                    "classes your program already has; nothing from the file runs), or save and load its "
                    "state_dict() instead.")
            top = module.split(".")[0]
            why = (f"whose module {module} is blocked" if top not in ("torch", "collections")
                   else "which is not on glassgrad's allow-list")
            raise pickle.UnpicklingError(WEIGHTS_ONLY_HEADER + f"Unsupported global: GLOBAL {module}.{name} {why}. "
                                         "Nothing from the file was run. If your program trusts it, pass it to "
                                         "torch.serialization.add_safe_globals([...]) or load inside "
                                         "torch.serialization.safe_globals([...]).")
        return g.value if g.fn is None and g.value is not None else g

    # ---- the interpreter ------------------------------------------------------
    def _run(self):
        self.pos = 0
        self.stack: list = []
        self.memo: dict = {}
        st, memo = self.stack, self.memo
        take = self._take
        while True:
            at = self.pos
            op = bytes(take(1))
            if op == b"\x80":                      # PROTO
                proto = take(1)[0]
                if proto > 5:
                    raise pickle.UnpicklingError(f"unsupported pickle protocol: {proto}")
            elif op == b"\x95":                    # FRAME (protocol 4+): only a length hint
                take(8)
            elif op == b".":                       # STOP
                if len(st) != 1 or st[0] is _MARK:
                    raise pickle.UnpicklingError(f"data.pkl is corrupted: {len(st)} values on the stack at STOP")
                return st.pop()
            elif op == b"(":                       # MARK
                st.append(_MARK)
            elif op == b"0":                       # POP
                st.pop()
            elif op == b"1":                       # POP_MARK
                self._pop_mark()
            elif op == b"2":                       # DUP
                st.append(st[-1])
            elif op == b"N":
                st.append(None)
            elif op == b"\x88":
                st.append(True)
            elif op == b"\x89":
                st.append(False)
            elif op == b"J":                       # BININT
                st.append(struct.unpack("<i", take(4))[0])
            elif op == b"K":                       # BININT1
                st.append(take(1)[0])
            elif op == b"M":                       # BININT2
                st.append(struct.unpack("<H", take(2))[0])
            elif op == b"\x8a":                    # LONG1
                n = take(1)[0]
                st.append(int.from_bytes(take(n), "little", signed=True))
            elif op == b"\x8b":                    # LONG4
                n = struct.unpack("<i", take(4))[0]
                if n > 1024:
                    raise pickle.UnpicklingError(f"LONG4 of {n} bytes is too long for a checkpoint integer")
                st.append(int.from_bytes(take(n), "little", signed=True))
            elif op == b"G":                       # BINFLOAT
                st.append(struct.unpack(">d", take(8))[0])
            elif op == b"X":                       # BINUNICODE
                n = struct.unpack("<I", take(4))[0]
                st.append(str(take(n), "utf-8", "surrogatepass"))
            elif op == b"\x8c":                    # SHORT_BINUNICODE
                n = take(1)[0]
                st.append(str(take(n), "utf-8", "surrogatepass"))
            elif op == b"\x8d":                    # BINUNICODE8
                n = struct.unpack("<Q", take(8))[0]
                st.append(str(take(n), "utf-8", "surrogatepass"))
            elif op == b"C":                       # SHORT_BINBYTES
                st.append(bytes(take(take(1)[0])))
            elif op == b"B":                       # BINBYTES
                st.append(bytes(take(struct.unpack("<I", take(4))[0])))
            elif op == b")":
                st.append(())
            elif op == b"t":                       # TUPLE
                st.append(tuple(self._pop_mark()))
            elif op in (b"\x85", b"\x86", b"\x87"):  # TUPLE1..3
                n = op[0] - 0x84
                if len(st) < n or any(x is _MARK for x in st[-n:]):  # noqa: SIM110
                    raise pickle.UnpicklingError(f"data.pkl is corrupted: TUPLE{n} with too few values")
                items = tuple(st[-n:])
                del st[-n:]
                st.append(items)
            elif op == b"]":
                st.append([])
            elif op == b"l":                       # LIST
                st.append(self._pop_mark())
            elif op == b"}":
                st.append({})
            elif op == b"d":                       # DICT
                items = self._pop_mark()
                st.append(self._pairs({}, items))
            elif op == b"a":                       # APPEND
                v = self._pop()
                self._list(st[-1]).append(v)
            elif op == b"e":                       # APPENDS
                items = self._pop_mark()
                self._list(st[-1]).extend(items)
            elif op == b"s":                       # SETITEM
                v = self._pop()
                k = self._pop()
                self._pairs(st[-1], [k, v])
            elif op == b"u":                       # SETITEMS
                items = self._pop_mark()
                self._pairs(st[-1], items)
            elif op == b"c":                       # GLOBAL
                module = self._line()
                name = self._line()
                st.append(self._global(module, name))
            elif op == b"\x93":                    # STACK_GLOBAL
                name = st.pop()
                module = st.pop()
                if not isinstance(module, str) or not isinstance(name, str):
                    raise pickle.UnpicklingError("data.pkl is corrupted: STACK_GLOBAL needs two strings")
                st.append(self._global(module, name))
            elif op == b"R":                       # REDUCE
                args = self._pop()
                fn = self._pop()
                if isinstance(fn, _Trusted) and isinstance(args, tuple):    # NOTE [ Safe globals ] 1
                    try:
                        st.append(fn.obj(*args))
                    except Exception as e:  # noqa: BLE001 - the trusted callee's own error
                        raise _CalleeError(e) from None
                    continue
                if not isinstance(fn, Allowed) or fn.fn is None:
                    raise pickle.UnpicklingError(f"data.pkl calls {fn!r}, which is not an allowed callable")
                if not isinstance(args, tuple):
                    raise pickle.UnpicklingError(f"data.pkl calls {fn!r} with arguments that are not a tuple")
                st.append(fn.call(args))
            elif op == b"\x81" and isinstance(st[-2] if len(st) >= 2 else None, _Trusted):   # NEWOBJ, a
                args, cls = self._pop(), self._pop()                                          # trusted class
                if not isinstance(cls.obj, type) or not isinstance(args, tuple):
                    raise pickle.UnpicklingError(f"data.pkl makes a {cls!r}, which is not a class")
                st.append(cls.obj.__new__(cls.obj, *args))
            elif op == b"b" and len(st) >= 2 and _safe.lookup(*_modules.class_path(type(st[-2]))) is type(st[-2]):
                state = self._pop()                                                           # BUILD of a
                inst = st[-1]                                                                 # trusted class
                if hasattr(inst, "__setstate__") and type(inst).__setstate__ is not object.__setstate__:
                    inst.__setstate__(state)
                elif isinstance(state, dict):
                    inst.__dict__.update(state)
                else:
                    raise pickle.UnpicklingError(f"data.pkl gives a {type(inst).__name__} a state it cannot take")
            elif op == b"\x81":                    # NEWOBJ: only an allowed nn.Module class
                args = self._pop()
                cls = self._pop()
                if not isinstance(cls, _ModuleClass) or args != ():
                    raise pickle.UnpicklingError(f"data.pkl makes a {cls!r}, which is not an allowed class")
                st.append(cls.cls.__new__(cls.cls))
            elif op == b"b" and self.allow_modules and len(st) >= 2 and _modules.is_module_object(st[-2]):   # a module's
                state = self._pop()                                                                   # BUILD
                if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                    raise pickle.UnpicklingError("data.pkl gives a module a state that is not a dict of names")
                _modules.build(st[-1], state)
            elif op == b"b":                       # BUILD
                state = self._pop()
                inst = st[-1]
                if type(inst) is not collections.OrderedDict or not isinstance(state, dict) \
                        or not all(isinstance(k, str) for k in state):
                    raise pickle.UnpicklingError(
                        f"data.pkl sets the state of a {type(inst).__name__}; glassgrad only restores "
                        "attributes (such as _metadata) of an OrderedDict")
                inst.__dict__.update(state)
            elif op == b"Q":                       # BINPERSID
                pid = self._pop()
                try:
                    st.append(self.persistent_load(pid))
                except Exception as e:  # noqa: BLE001 - its own error (missing record, no GPU, ...)
                    raise _CalleeError(e) from None
            elif op == b"q":                       # BINPUT
                memo[take(1)[0]] = st[-1]
            elif op == b"r":                       # LONG_BINPUT
                memo[struct.unpack("<I", take(4))[0]] = st[-1]
            elif op == b"\x94":                    # MEMOIZE
                memo[len(memo)] = st[-1]
            elif op == b"h":                       # BINGET
                st.append(self._memo(take(1)[0]))
            elif op == b"j":                       # LONG_BINGET
                st.append(self._memo(struct.unpack("<I", take(4))[0]))
            else:
                name = _OPCODE_NAMES.get(op[0], "unknown")
                raise pickle.UnpicklingError(
                    WEIGHTS_ONLY_HEADER + f"Unsupported operand {op[0]} ({name}) at byte {at} of data.pkl.")

    def _pop(self):
        v = self.stack.pop()
        if v is _MARK:
            raise pickle.UnpicklingError(f"data.pkl is corrupted: a value was expected at byte {self.pos}, "
                                         "found MARK")
        return v

    def _memo(self, i):
        if i not in self.memo:
            raise pickle.UnpicklingError(f"data.pkl is corrupted: memo entry {i} read before it was written")
        return self.memo[i]

    @staticmethod
    def _list(target):
        if type(target) is not list:
            raise pickle.UnpicklingError(f"data.pkl appends to a {type(target).__name__}; only lists allowed")
        return target

    @staticmethod
    def _pairs(target, items):
        if type(target) not in (dict, collections.OrderedDict):
            raise pickle.UnpicklingError(f"data.pkl sets items on a {type(target).__name__}; "
                                         "only dict and OrderedDict allowed")
        if len(items) % 2:
            raise pickle.UnpicklingError("data.pkl is corrupted: SETITEMS with an odd number of values")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]
        return target


def _opcode_names() -> dict:
    import pickletools
    return {ord(o.code): o.name for o in pickletools.opcodes if len(o.code) == 1}


_OPCODE_NAMES = _opcode_names()
