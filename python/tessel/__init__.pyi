# Type stubs of the `tessel` package (python/tessel/__init__.py); the classes are the
# extension's (_tessel.pyi). tests/python/test_stubs.py checks both against the built module.
from __future__ import annotations

import os
from typing import Any, Callable, Literal, Mapping, overload

import numpy
import numpy.typing
import pandas

from ._tessel import Error as Error
from ._tessel import Graph as Graph
from ._tessel import HwConfig as HwConfig
from ._tessel import InputError as InputError
from ._tessel import Op as Op
from ._tessel import Program as Program
from ._tessel import QuantizedModel as QuantizedModel
from ._tessel import Schedule as Schedule
from ._tessel import SimReport as SimReport
from ._tessel import Tensor as Tensor
from ._tessel import __version__ as __version__
from ._tessel import default_input as default_input
from ._tessel import policies as policies
from ._tessel import zoo_models as zoo_models

__all__: list[str]

_Model = Graph | str | os.PathLike[str]
_Hw = HwConfig | str | os.PathLike[str]
_Array = numpy.typing.NDArray[numpy.float32]
_Spec = str | os.PathLike[str] | dict[str, Any]

def load_model(name_or_path: str | os.PathLike[str], *, with_weights: bool = True,
               batch: int = 1, seed: int = 0) -> Graph: ...
def quantize(model: _Model, hw: _Hw | None = None, *, policy: str = "fusion+reuse",
             config: str | os.PathLike[str] | dict[str, Any] | None = None,
             input_seed: int = 0) -> QuantizedModel: ...
def schedule(model: _Model, hw: _Hw, *, policy: str = "fusion+reuse", objective: str = "bytes",
             weight_sweep: bool = True, prefetch: bool = True, tiles_2d: bool = True,
             s2d_stem: bool = True, fold_activations: bool = True) -> Schedule: ...
def compile(model: QuantizedModel | _Model, hw: _Hw, *, policy: str = "fusion+reuse",
            objective: str = "bytes", quant: str | os.PathLike[str] | dict[str, Any] | None = None,
            input_seed: int = 0) -> Program: ...
def simulate(program: Program, *, timing_only: bool = False, trace: str = "") -> SimReport: ...
def infer(model: QuantizedModel | _Model,
          x: _Array | Mapping[str, _Array]) -> _Array | dict[str, _Array]: ...
@overload
def sweep(spec: _Spec, *, out: str | os.PathLike[str] | None = None, jobs: int = 0,
          progress: bool | Callable[[str], object] | None = None,
          summary: Literal[False] = False) -> pandas.DataFrame: ...
@overload
def sweep(spec: _Spec, *, out: str | os.PathLike[str] | None = None, jobs: int = 0,
          progress: bool | Callable[[str], object] | None = None,
          summary: Literal[True]) -> tuple[pandas.DataFrame, dict[str, Any]]: ...
