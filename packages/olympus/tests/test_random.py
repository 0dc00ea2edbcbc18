"""Tests for `olympus.random`: bit-compatibility with ``jax.random``, the threefry
primitive's known-answer vectors, typed keys, jit/vmap, and sampler statistics.

The REF_* tables below were recorded ONCE by running the reference implementation
(jax==0.10.2 and jaxlib==0.10.2 from PyPI, CPU, in a throwaway virtualenv
``python -m venv /tmp/jaxref``; jax is never imported by Olympus or by these tests). A
script evaluated ``jax.random.<fn>(...)`` for each case named in `CASES` (the same call
with ``jax`` in place of ``olympus``) and printed the results, in three configurations:

* REF_PARTITIONABLE: jax's defaults (``jax_threefry_partitionable=True``, 32-bit);
* REF_LEGACY: ``jax.config.update("jax_threefry_partitionable", False)``;
* REF_X64: ``jax.config.update("jax_enable_x64", True)`` (partitionable).

Integers are exact; floats are the shortest decimal repr of the value (float16 and
bfloat16 via float32), which round-trips to the identical value, so float cases are
compared bit for bit where the result is exact (bit manipulations of the threefry stream) and
within a stated ulp bound otherwise (`ULP_BOUNDS`: XLA's CPU code differs by CPU).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import random as R
from olympus_ir import primitives as P
from olympus_trace.core import bind

REF_PARTITIONABLE = {
    "PRNGKey(0)": ("uint32", (2,), [0, 0]),
    "PRNGKey(42)": ("uint32", (2,), [0, 42]),
    "PRNGKey(-1)": ("uint32", (2,), [0, 4294967295]),
    "PRNGKey(2**32+5)": ("uint32", (2,), [0, 5]),
    "PRNGKey(2**40+3)": ("uint32", (2,), [0, 3]),
    "PRNGKey(uint32 max)": ("uint32", (2,), [0, 4294967295]),
    "PRNGKey(int32 -7 arr)": ("uint32", (2,), [0, 4294967289]),
    "key_data(key(0))": ("uint32", (2,), [0, 0]),
    "key_data(key(7))": ("uint32", (2,), [0, 7]),
    "split(k0)": ("uint32", (2, 2), [1797259609, 2579123966, 928981903, 3453687069]),
    "split(k0,3)": (
        "uint32", (3, 2),
        [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009]),
    "split(k0,(2,3))": (
        "uint32", (2, 3, 2),
        [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009, 2467461003,
        3840466878, 2285895361, 433833334, 1524306142, 1887795613]),
    "split(k42,1)": ("uint32", (1, 2), [1832780943, 270669613]),
    "key_data(split(key(0)))": ("uint32", (2, 2), [1797259609, 2579123966, 928981903, 3453687069]),
    "fold_in(k0,1)": ("uint32", (2,), [928981903, 3453687069]),
    "fold_in(k42,12345)": ("uint32", (2,), [605133419, 3761158475]),
    "bits(k0,(5,))": ("uint32", (5,), [4070199207, 4202968722, 1427181096, 2012915765, 2447653815]),
    "bits(k0,(2,3))": (
        "uint32", (2, 3),
        [4070199207, 4202968722, 1427181096, 2012915765, 2447653815, 710830403]),
    "bits(k0,())": ("uint32", (), [4070199207]),
    "bits(k0,(7,),uint8)": ("uint8", (7,), [167, 146, 40, 53, 183, 67, 125]),
    "bits(k0,(5,),uint16)": ("uint16", (5,), [20391, 13970, 3624, 43061, 15287]),
    "bits(k0,(3,),uint64)": ("uint32", (3,), [4070199207, 4202968722, 1427181096]),
    "uniform(k0,(5,))": ("float32", (5,), [0.947667, 0.9785799, 0.33229148, 0.46866846, 0.5698887]),
    "uniform(k0)": ("float32", (), [0.947667]),
    "uniform(k42,(2,3),min=-2,max=3)": (
        "float32", (2, 3),
        [0.44354784, 1.3989859, 1.0813575, 0.8050804, 0.25322306, 0.9293293]),
    "uniform(k0,(4,),float16)": ("float16", (4,), [0.31054688, 0.21289062, 0.0546875, 0.65625]),
    "uniform(k0,(4,),bfloat16)": ("bfloat16", (4,), [0.6484375, 0.5703125, 0.15625, 0.203125]),
    "uniform(k0,(3,),float64)": ("float32", (3,), [0.947667, 0.9785799, 0.33229148]),
    "normal(k0,(5,))": (
        "float32", (5,),
        [1.6226422, 2.0252647, -0.43359444, -0.07861735, 0.1760909]),
    "normal(k42,(2,2))": ("float32", (2, 2), [-0.028304616, 0.46713185, 0.29570296, 0.15354592]),
    "normal(k0,(3,),float16)": ("float16", (3,), [-0.49365234, -0.79541016, -1.5986328]),
    "normal(k0,(3,),float64)": ("float32", (3,), [1.6226422, 2.0252647, -0.43359444]),
    "randint(k0,(6,),0,10)": ("int32", (6,), [9, 0, 2, 3, 1, 7]),
    "randint(k42,(2,3),-5,5)": ("int32", (2, 3), [-1, -1, -4, 4, 4, 4]),
    "randint(k0,(6,),0,256,uint8)": ("uint8", (6,), [101, 80, 200, 61, 3, 211]),
    "randint(k0,(6,),-100,100,int8)": ("int8", (6,), [89, -100, 12, 73, 71, 47]),
    "permutation(k0,10)": ("int32", (10,), [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]),
    "permutation(k42,arange(12).reshape(3,4),axis=1)": (
        "int32", (3, 4),
        [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9]),
    "permutation(k42,arange(12).reshape(3,4),independent)": (
        "int32", (3, 4),
        [4, 5, 2, 7, 8, 9, 6, 3, 0, 1, 10, 11]),
    "bernoulli(k0,0.3,(8,))": ("bool", (8,), [0, 0, 0, 0, 0, 1, 0, 0]),
    "categorical(k0,logits(2,4))": ("int32", (2,), [1, 0]),
    "categorical(k0,logits(4,),shape=(6,))": ("int32", (6,), [1, 3, 2, 3, 2, 3]),
    "categorical(k0,logits(5,),shape=(3,),replace=False)": ("int32", (3,), [1, 4, 3]),
    "choice(k0,10,(4,))": ("int32", (4,), [9, 0, 2, 3]),
    "choice(k0,10,(4,),replace=False)": ("int32", (4,), [0, 1, 8, 5]),
    "choice(k0,arange(5.),(6,),p)": ("float32", (6,), [0.0, 0.0, 3.0, 2.0, 2.0, 4.0]),
    "choice(k0,5,(3,),replace=False,p)": ("int32", (3,), [1, 0, 4]),
    "truncated_normal(k0,-1,1,(5,))": (
        "float32", (5,),
        [0.8618594, 0.9412883, -0.2910484, -0.05364177, 0.119883515]),
    "gamma(k0,2.,(5,))": ("float32", (5,), [1.5897877, 1.7599413, 1.1290071, 3.974334, 2.9546]),
    "gamma(k42,0.5,(4,))": ("float32", (4,), [0.9994542, 0.5063274, 1.6493309, 0.03901969]),
    "gamma(k0,[1,2,3])": ("float32", (3,), [0.6184863, 1.7599413, 1.9683666]),
    "loggamma(k0,0.1,(3,))": ("float32", (3,), [-1.4369853, -1.1380526, -14.551184]),
    "beta(k0,2,3,(5,))": (
        "float32", (5,),
        [0.23627362, 0.49045965, 0.68379486, 0.5423443, 0.49023703]),
    "dirichlet(k0,[1,2,3])": ("float32", (3,), [0.1422856, 0.4048826, 0.45283177]),
    "dirichlet(k0,[.5,.5],(2,))": (
        "float32", (2, 2),
        [0.46224144, 0.5377585, 0.39130932, 0.6086906]),
    "exponential(k0,(5,))": (
        "float32", (5,),
        [2.950128, 3.8434246, 0.40390354, 0.6323691, 0.84371126]),
    "laplace(k0,(5,))": (
        "float32", (5,),
        [-2.2569816, -3.1502788, 0.40859544, 0.06471242, -0.15056418]),
    "logistic(k0,(5,))": (
        "float32", (5,),
        [2.896376, 3.8217716, -0.6978392, -0.12549055, 0.2813971]),
    "gumbel(k0,(5,))": (
        "float32", (5,),
        [2.9233725, 3.8326178, -0.09689324, 0.27725708, 0.57569456]),
    "gumbel(k0,(5,),mode=high)": (
        "float32", (5,),
        [-1.0818486, -1.3463638, 0.90657884, 0.45828176, 0.16994496]),
    "poisson(k0,3.,(6,))": ("int32", (6,), [0, 0, 4, 4, 1, 2]),
    "poisson(k42,25.,(6,))": ("int32", (6,), [28, 30, 20, 21, 18, 20]),
    "poisson(k0,[0,1,5,50])": ("int32", (4,), [0, 0, 5, 57]),
    "multivariate_normal(k0,mean,cov,(3,))": (
        "float32", (3, 2),
        [3.2947626, 1.4681523, 0.38680488, -1.2268386, 1.2490301, -1.8470488]),
    "cauchy(k0,(4,))": ("float32", (4,), [6.0274944, 14.837895, -0.58172226, -0.09874987]),
    "rademacher(k0,(6,))": ("int32", (6,), [-1, -1, 1, 1, -1, 1]),
    "t(k0,3.,(4,))": ("float32", (4,), [0.69022465, -3.2393365, -1.6745249, -1.8150756]),
    "chisquare(k0,3.,(4,))": ("float32", (4,), [2.205084, 2.4899669, 1.4557135, 6.424535]),
    "lognormal(k0,1.,(4,))": ("float32", (4,), [5.066459, 7.578117, 0.64817506, 0.9243936]),
    "pareto(k0,2.,(4,))": ("float32", (4,), [4.371316, 6.832648, 1.223789, 1.3718834]),
    "maxwell(k0,(4,))": ("float32", (4,), [2.6310966, 0.99103284, 0.9649306, 3.0782752]),
    "vmap(uniform)(split(k0,3))": (
        "float32", (3, 2),
        [0.8423141, 0.18237865, 0.0072938204, 0.02089119, 0.9024495, 0.91229284]),
    "jit(normal)(k42)": ("float32", (3,), [-0.028304616, 0.46713185, 0.29570296]),
    "bits(k0,(1000,))[-5:]": (
        "uint32", (5,),
        [2357690530, 2454727774, 2054697865, 286292207, 1693790770]),
    "bits(k0,(5,)) typed": (
        "uint32", (5,),
        [4070199207, 4202968722, 1427181096, 2012915765, 2447653815]),
}

REF_LEGACY = {
    "PRNGKey(0)": ("uint32", (2,), [0, 0]),
    "PRNGKey(42)": ("uint32", (2,), [0, 42]),
    "PRNGKey(-1)": ("uint32", (2,), [0, 4294967295]),
    "PRNGKey(2**32+5)": ("uint32", (2,), [0, 5]),
    "PRNGKey(2**40+3)": ("uint32", (2,), [0, 3]),
    "PRNGKey(uint32 max)": ("uint32", (2,), [0, 4294967295]),
    "PRNGKey(int32 -7 arr)": ("uint32", (2,), [0, 4294967289]),
    "key_data(key(0))": ("uint32", (2,), [0, 0]),
    "key_data(key(7))": ("uint32", (2,), [0, 7]),
    "split(k0)": ("uint32", (2, 2), [4146024105, 967050713, 2718843009, 1272950319]),
    "split(k0,3)": (
        "uint32", (3, 2),
        [2467461003, 428148500, 3186719485, 3840466878, 2562233961, 1946702221]),
    "split(k0,(2,3))": (
        "uint32", (2, 3, 2),
        [3792494674, 582972539, 2883479965, 3114868201, 1492792183, 3245818218, 2909014575,
        82862454, 1782947029, 692041252, 1067690106, 2610540821]),
    "split(k42,1)": ("uint32", (1, 2), [64467757, 2916123636]),
    "key_data(split(key(0)))": ("uint32", (2, 2), [4146024105, 967050713, 2718843009, 1272950319]),
    "fold_in(k0,1)": ("uint32", (2,), [928981903, 3453687069]),
    "fold_in(k42,12345)": ("uint32", (2,), [605133419, 3761158475]),
    "bits(k0,(5,))": ("uint32", (5,), [2467461003, 428148500, 1688610540, 3840466878, 2562233961]),
    "bits(k0,(2,3))": (
        "uint32", (2, 3),
        [2467461003, 428148500, 3186719485, 3840466878, 2562233961, 1946702221]),
    "bits(k0,())": ("uint32", (), [1797259609]),
    "bits(k0,(7,),uint8)": ("uint8", (7,), [143, 35, 95, 55, 29, 21, 219]),
    "bits(k0,(5,),uint16)": ("uint16", (5,), [20137, 63263, 64300, 20622, 16513]),
    "bits(k0,(3,),uint64)": ("uint32", (3,), [4146024105, 1351547692, 2718843009]),
    "uniform(k0,(5,))": (
        "float32", (5,),
        [0.57450044, 0.09968603, 0.39316022, 0.8941783, 0.59656656]),
    "uniform(k0)": ("float32", (), [0.41845703]),
    "uniform(k42,(2,3),min=-2,max=3)": (
        "float32", (2, 3),
        [1.6490941, 2.345969, 2.3615007, -0.95907164, -1.0668792, 0.7511281]),
    "uniform(k0,(4,),float16)": ("float16", (4,), [0.13867188, 0.21582031, 0.08203125, 0.80371094]),
    "uniform(k0,(4,),bfloat16)": ("bfloat16", (4,), [0.34375, 0.0, 0.125, 0.4140625]),
    "uniform(k0,(3,),float64)": ("float32", (3,), [0.9653214, 0.31468165, 0.63302994]),
    "normal(k0,(5,))": (
        "float32", (5,),
        [0.18784384, -1.2833426, -0.2710917, 1.2490594, 0.24447003]),
    "normal(k42,(2,2))": ("float32", (2, 2), [0.18693547, 1.0653335, -1.5593132, -1.5352962]),
    "normal(k0,(3,),float16)": ("float16", (3,), [-1.0849609, -0.78564453, -1.3896484]),
    "normal(k0,(3,),float64)": ("float32", (3,), [1.8160863, -0.48262316, 0.33988908]),
    "randint(k0,(6,),0,10)": ("int32", (6,), [8, 1, 5, 8, 8, 0]),
    "randint(k42,(2,3),-5,5)": ("int32", (2, 3), [-3, -2, 4, 4, -1, 1]),
    "randint(k0,(6,),0,256,uint8)": ("uint8", (6,), [20, 49, 175, 4, 50, 242]),
    "randint(k0,(6,),-100,100,int8)": ("int8", (6,), [-32, 21, -5, 8, 78, -90]),
    "permutation(k0,10)": ("int32", (10,), [2, 7, 9, 6, 0, 8, 1, 3, 4, 5]),
    "permutation(k42,arange(12).reshape(3,4),axis=1)": (
        "int32", (3, 4),
        [2, 0, 1, 3, 6, 4, 5, 7, 10, 8, 9, 11]),
    "permutation(k42,arange(12).reshape(3,4),independent)": (
        "int32", (3, 4),
        [4, 5, 10, 11, 0, 9, 2, 7, 8, 1, 6, 3]),
    "bernoulli(k0,0.3,(8,))": ("bool", (8,), [0, 0, 0, 0, 1, 0, 1, 0]),
    "categorical(k0,logits(2,4))": ("int32", (2,), [3, 1]),
    "categorical(k0,logits(4,),shape=(6,))": ("int32", (6,), [3, 2, 3, 3, 2, 3]),
    "categorical(k0,logits(5,),shape=(3,),replace=False)": ("int32", (3,), [3, 4, 2]),
    "choice(k0,10,(4,))": ("int32", (4,), [8, 1, 7, 0]),
    "choice(k0,10,(4,),replace=False)": ("int32", (4,), [2, 7, 9, 6]),
    "choice(k0,arange(5.),(6,),p)": ("float32", (6,), [2.0, 4.0, 1.0, 1.0, 2.0, 2.0]),
    "choice(k0,5,(3,),replace=False,p)": ("int32", (3,), [3, 4, 2]),
    "truncated_normal(k0,-1,1,(5,))": (
        "float32", (5,),
        [0.12783612, -0.749726, -0.18386008, 0.7358905, 0.16600876]),
    "gamma(k0,2.,(5,))": (
        "float32", (5,),
        [1.0030836, 0.118375756, 2.1924422, 4.087237, 2.7085962]),
    "gamma(k42,0.5,(4,))": ("float32", (4,), [0.028516758, 0.028035043, 0.078223236, 0.3140074]),
    "gamma(k0,[1,2,3])": ("float32", (3,), [0.17698084, 1.4034604, 1.9852312]),
    "loggamma(k0,0.1,(3,))": ("float32", (3,), [-7.3576446, -3.085065, -5.5347757]),
    "beta(k0,2,3,(5,))": (
        "float32", (5,),
        [0.19924146, 0.40696082, 0.48848394, 0.22833028, 0.7343159]),
    "dirichlet(k0,[1,2,3])": ("float32", (3,), [0.049634635, 0.3936033, 0.55676204]),
    "dirichlet(k0,[.5,.5],(2,))": (
        "float32", (2, 2),
        [0.9853109, 0.014689092, 0.6469801, 0.35301992]),
    "exponential(k0,(5,))": (
        "float32", (5,),
        [0.85449135, 0.10501172, 0.4994905, 2.2459993, 0.90774375]),
    "laplace(k0,(5,))": (
        "float32", (5,),
        [-0.16134426, 1.6125823, 0.24039079, -1.5528525, -0.21459664]),
    "logistic(k0,(5,))": (
        "float32", (5,),
        [0.30023694, -2.2007182, -0.43404758, 2.1341493, 0.39117926]),
    "gumbel(k0,(5,))": (
        "float32", (5,),
        [0.59013146, -0.83539724, 0.06877352, 2.1905956, 0.6605551]),
    "gumbel(k0,(5,),mode=high)": (
        "float32", (5,),
        [0.8247194, 0.075970136, 0.5835939, 1.3387806, 0.9156245]),
    "poisson(k0,3.,(6,))": ("int32", (6,), [3, 0, 1, 2, 3, 2]),
    "poisson(k42,25.,(6,))": ("int32", (6,), [24, 22, 19, 23, 24, 24]),
    "poisson(k0,[0,1,5,50])": ("int32", (4,), [0, 1, 5, 49]),
    "multivariate_normal(k0,mean,cov,(3,))": (
        "float32", (3, 2),
        [1.2656513, -2.1340442, 1.9184159, 0.39799213, 1.3457328, -1.0234308]),
    "cauchy(k0,(4,))": ("float32", (4,), [9.142522, -1.1696658, 0.44408733, -0.7440545]),
    "rademacher(k0,(6,))": ("int32", (6,), [-1, 1, -1, -1, -1, 1]),
    "t(k0,3.,(4,))": ("float32", (4,), [0.105814144, 2.5342221, -1.2560208, 0.025014006]),
    "chisquare(k0,3.,(4,))": ("float32", (4,), [2.3809984, 0.25804877, 1.127818, 1.8973336]),
    "lognormal(k0,1.,(4,))": ("float32", (4,), [6.147751, 0.4700646, 1.4047918, 0.5857657]),
    "pareto(k0,2.,(4,))": ("float32", (4,), [5.369939, 1.1360402, 1.6507628, 1.1921515]),
    "maxwell(k0,(4,))": ("float32", (4,), [1.6800761, 0.9957259, 2.1299634, 1.2310898]),
    "vmap(uniform)(split(k0,3))": (
        "float32", (3, 2),
        [0.46218193, 0.46380138, 0.89682865, 0.4831288, 0.5856452, 0.29917133]),
    "jit(normal)(k42)": ("float32", (3,), [0.18693547, -1.2806505, -1.5593132]),
    "bits(k0,(1000,))[-5:]": (
        "uint32", (5,),
        [2993643451, 1680391052, 1432875037, 1140976236, 1835258535]),
    "bits(k0,(5,)) typed": (
        "uint32", (5,),
        [2467461003, 428148500, 1688610540, 3840466878, 2562233961]),
}

REF_X64 = {
    "PRNGKey(0)": ("uint32", (2,), [0, 0]),
    "PRNGKey(42)": ("uint32", (2,), [0, 42]),
    "PRNGKey(-1)": ("uint32", (2,), [4294967295, 4294967295]),
    "PRNGKey(2**32+5)": ("uint32", (2,), [1, 5]),
    "PRNGKey(2**40+3)": ("uint32", (2,), [256, 3]),
    "PRNGKey(uint32 max)": ("uint32", (2,), [0, 4294967295]),
    "PRNGKey(int32 -7 arr)": ("uint32", (2,), [0, 4294967289]),
    "key_data(key(0))": ("uint32", (2,), [0, 0]),
    "key_data(key(7))": ("uint32", (2,), [0, 7]),
    "split(k0)": ("uint32", (2, 2), [1797259609, 2579123966, 928981903, 3453687069]),
    "split(k0,3)": (
        "uint32", (3, 2),
        [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009]),
    "split(k0,(2,3))": (
        "uint32", (2, 3, 2),
        [1797259609, 2579123966, 928981903, 3453687069, 4146024105, 2718843009, 2467461003,
        3840466878, 2285895361, 433833334, 1524306142, 1887795613]),
    "split(k42,1)": ("uint32", (1, 2), [1832780943, 270669613]),
    "key_data(split(key(0)))": ("uint32", (2, 2), [1797259609, 2579123966, 928981903, 3453687069]),
    "fold_in(k0,1)": ("uint32", (2,), [928981903, 3453687069]),
    "fold_in(k42,12345)": ("uint32", (2,), [605133419, 3761158475]),
    "bits(k0,(5,))": (
        "uint64", (5,),
        [7719171245655871230, 3989946895414531357, 17807037942121513089, 10597664315880824766,
        9817845818006947190]),
    "bits(k0,(2,3))": (
        "uint64", (2, 3),
        [7719171245655871230, 3989946895414531357, 17807037942121513089, 10597664315880824766,
        9817845818006947190, 6546845030869727645]),
    "bits(k0,())": ("uint64", (), [7719171245655871230]),
    "bits(k0,(7,),uint8)": ("uint8", (7,), [167, 146, 40, 53, 183, 67, 125]),
    "bits(k0,(5,),uint16)": ("uint16", (5,), [20391, 13970, 3624, 43061, 15287]),
    "bits(k0,(3,),uint64)": (
        "uint64", (3,),
        [7719171245655871230, 3989946895414531357, 17807037942121513089]),
    "uniform(k0,(5,))": (
        "float64", (5,),
        [0.41845711171638644, 0.21629545460551136, 0.9653214611189975, 0.5745005337275046,
        0.5322264882505428]),
    "uniform(k0)": ("float64", (), [0.41845711171638644]),
    "uniform(k42,(2,3),min=-2,max=3)": (
        "float64", (2, 3),
        [0.13363783324954537, -1.924949652423427, 0.8707220894976759, 1.6490944845231543,
        1.43900170615283, 1.2196887095830518]),
    "uniform(k0,(4,),float16)": ("float16", (4,), [0.31054688, 0.21289062, 0.0546875, 0.65625]),
    "uniform(k0,(4,),bfloat16)": ("bfloat16", (4,), [0.6484375, 0.5703125, 0.15625, 0.203125]),
    "uniform(k0,(3,),float64)": (
        "float64", (3,),
        [0.41845711171638644, 0.21629545460551136, 0.9653214611189975]),
    "normal(k0,(5,))": (
        "float64", (5,),
        [-0.2058421394796434, -0.7847657764467411, 1.8160866726679836, 0.1878440128937887,
        0.08086788103743275]),
    "normal(k42,(2,2))": (
        "float64", (2, 2),
        [-0.18471174528191162, -2.169824560397754, 0.18693555179382582, 0.6122653570510959]),
    "normal(k0,(3,),float16)": ("float16", (3,), [-0.49365234, -0.79541016, -1.5986328]),
    "normal(k0,(3,),float64)": (
        "float64", (3,),
        [-0.2058421394796434, -0.7847657764467411, 1.8160866726679836]),
    "randint(k0,(6,),0,10)": ("int64", (6,), [5, 1, 5, 7, 3, 5]),
    "randint(k42,(2,3),-5,5)": ("int64", (2, 3), [0, 3, -2, -4, 0, 1]),
    "randint(k0,(6,),0,256,uint8)": ("uint8", (6,), [101, 80, 200, 61, 3, 211]),
    "randint(k0,(6,),-100,100,int8)": ("int8", (6,), [89, -100, 12, 73, 71, 47]),
    "randint(k0,(4,),0,2**40,int64)": (
        "int64", (4,),
        [455627099919, 205787154559, 30857237199, 999804089301]),
    "permutation(k0,10)": ("int64", (10,), [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]),
    "permutation(k42,arange(12).reshape(3,4),axis=1)": (
        "int64", (3, 4),
        [2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9]),
    "permutation(k42,arange(12).reshape(3,4),independent)": (
        "int64", (3, 4),
        [4, 5, 2, 7, 8, 9, 6, 3, 0, 1, 10, 11]),
    "bernoulli(k0,0.3,(8,))": ("bool", (8,), [0, 1, 0, 0, 0, 0, 0, 0]),
    "categorical(k0,logits(2,4))": ("int64", (2,), [2, 2]),
    "categorical(k0,logits(4,),shape=(6,))": ("int64", (6,), [2, 2, 2, 1, 3, 3]),
    "categorical(k0,logits(5,),shape=(3,),replace=False)": ("int32", (3,), [2, 4, 3]),
    "choice(k0,10,(4,))": ("int64", (4,), [5, 1, 5, 7]),
    "choice(k0,10,(4,),replace=False)": ("int64", (4,), [0, 1, 8, 5]),
    "choice(k0,arange(5.),(6,),p)": ("float64", (6,), [2.0, 3.0, 0.0, 2.0, 2.0, 3.0]),
    "choice(k0,5,(3,),replace=False,p)": ("int64", (3,), [2, 3, 4]),
    "truncated_normal(k0,-1,1,(5,))": (
        "float64", (5,),
        [-0.13999612249333174, -0.5063146559998811, 0.9065215647466319, 0.12783628174440737,
        0.05517552153595657]),
    "gamma(k0,2.,(5,))": (
        "float64", (5,),
        [1.3520307957942443, 1.124359450100187, 3.7324041613131316, 0.20633363401274485,
        1.7981591432708315]),
    "gamma(k42,0.5,(4,))": (
        "float64", (4,),
        [0.19865354933259452, 0.014509096904634517, 0.04935283658316467, 0.05758166046954062]),
    "gamma(k0,[1,2,3])": (
        "float64", (3,),
        [0.47552933270600617, 1.124359450100187, 5.130558134200619]),
    "loggamma(k0,0.1,(3,))": (
        "float64", (3,),
        [-11.70236649100636, -23.66064024723698, -7.68301227040329]),
    "beta(k0,2,3,(5,))": (
        "float64", (5,),
        [0.3279560651142136, 0.6138090084766978, 0.7601342122657357, 0.017005095087795453,
        0.5659529825837354]),
    "dirichlet(k0,[1,2,3])": (
        "float64", (3,),
        [0.07065345564265817, 0.16705568946084431, 0.7622908548964975]),
    "dirichlet(k0,[.5,.5],(2,))": (
        "float64", (2, 2),
        [0.9282056105264114, 0.07179438947358861, 0.9994477201455921, 0.0005522798544078251]),
    "exponential(k0,(5,))": (
        "float64", (5,),
        [0.5420705551711603, 0.24372318502372997, 3.3616342594163338, 0.8544915853232073,
        0.7597710494590219]),
    "laplace(k0,(5,))": (
        "float64", (5,),
        [0.17803369470862349, 0.8379627799904482, -2.66848707885639, -0.1613444047632622,
        -0.06662386889907662]),
    "logistic(k0,(5,))": (
        "float64", (5,),
        [-0.3291103200974086, -1.2873867755266637, 3.3263401466314915, 0.3002373326590482,
        0.12908489901556597]),
    "gumbel(k0,(5,))": (
        "float64", (5,),
        [0.13790565977540292, -0.4259929367942607, 3.344039105585023, 0.5901317576885231,
        0.46094692457780456]),
    "gumbel(k0,(5,),mode=high)": (
        "float64", (5,),
        [0.6123591104220514, 1.4117221853147974, -1.2124272424584797, 0.1572486239609849,
        0.27473814179868444]),
    "poisson(k0,3.,(6,))": ("int64", (6,), [0, 0, 4, 4, 1, 2]),
    "poisson(k42,25.,(6,))": ("int64", (6,), [28, 30, 20, 21, 18, 20]),
    "poisson(k0,[0,1,5,50])": ("int64", (4,), [0, 0, 5, 57]),
    "multivariate_normal(k0,mean,cov,(3,))": (
        "float64", (3, 2),
        [0.708895254639994, -1.8068573524223357, 3.5683344029320905, -0.18220441466565152,
        1.1143644541235114, -1.3194866611138205]),
    "cauchy(k0,(4,))": (
        "float64", (4,),
        [-0.2619295066536063, -1.2378460184296847, 9.142528431003585, 0.23841982247135]),
    "rademacher(k0,(6,))": ("int64", (6,), [1, 1, -1, -1, -1, 1]),
    "t(k0,3.,(4,))": (
        "float64", (4,),
        [1.4011588834378865, -0.6072461160668968, 1.121963258696009, 2.261203443946892]),
    "chisquare(k0,3.,(4,))": (
        "float64", (4,),
        [1.813893477449012, 1.4483538511993956, 5.9802748258137335, 0.14985750791987346]),
    "lognormal(k0,1.,(4,))": (
        "float64", (4,),
        [0.813961558536697, 0.45622654827539666, 6.147753144260601, 1.2066452795634266]),
    "pareto(k0,2.,(4,))": (
        "float64", (4,),
        [1.3113213298190585, 1.129597746173524, 5.369942118088253, 1.5330294228017152]),
    "maxwell(k0,(4,))": (
        "float64", (4,),
        [1.9890699115189192, 0.42460738321377167, 1.2403079123658307, 2.0746335163022582]),
    "vmap(uniform)(split(k0,3))": (
        "float64", (3, 2),
        [0.9699479979898888, 0.31518185988363556, 0.08062436666431605, 0.923948835561414,
        0.651922255581562, 0.8795451917764219]),
    "jit(normal)(k42)": (
        "float64", (3,),
        [-0.18471174528191162, -2.169824560397754, 0.18693555179382582]),
    "bits(k0,(1000,))[-5:]": (
        "uint64", (5,),
        [1835210661621168893, 3162523696064866005, 4044076305776853616, 13989260402797817560,
        14684985039028928036]),
    "bits(k0,(5,)) typed": (
        "uint64", (5,),
        [7719171245655871230, 3989946895414531357, 17807037942121513089, 10597664315880824766,
        9817845818006947190]),
}


def _k0():
    return R.PRNGKey(0)


def _k42():
    return R.PRNGKey(42)


_P5 = [.1, .2, .3, .2, .2]

#: name -> the Olympus call corresponding to the recorded JAX call of the same name.
CASES = {
    "PRNGKey(0)": lambda: _k0(),
    "PRNGKey(42)": lambda: _k42(),
    "PRNGKey(-1)": lambda: R.PRNGKey(-1),
    "PRNGKey(2**32+5)": lambda: R.PRNGKey(2**32 + 5),
    "PRNGKey(2**40+3)": lambda: R.PRNGKey(2**40 + 3),
    "PRNGKey(uint32 max)": lambda: R.PRNGKey(np.uint32(0xFFFFFFFF)),
    "PRNGKey(int32 -7 arr)": lambda: R.PRNGKey(jnp.asarray(np.int32(-7))),
    "key_data(key(0))": lambda: R.key_data(R.key(0)),
    "key_data(key(7))": lambda: R.key_data(R.key(7)),
    "split(k0)": lambda: R.split(_k0()),
    "split(k0,3)": lambda: R.split(_k0(), 3),
    "split(k0,(2,3))": lambda: R.split(_k0(), (2, 3)),
    "split(k42,1)": lambda: R.split(_k42(), 1),
    "key_data(split(key(0)))": lambda: R.key_data(R.split(R.key(0))),
    "fold_in(k0,1)": lambda: R.fold_in(_k0(), 1),
    "fold_in(k42,12345)": lambda: R.fold_in(_k42(), 12345),
    "bits(k0,(5,))": lambda: R.bits(_k0(), (5,)),
    "bits(k0,(2,3))": lambda: R.bits(_k0(), (2, 3)),
    "bits(k0,())": lambda: R.bits(_k0()),
    "bits(k0,(7,),uint8)": lambda: R.bits(_k0(), (7,), jnp.uint8),
    "bits(k0,(5,),uint16)": lambda: R.bits(_k0(), (5,), jnp.uint16),
    "bits(k0,(3,),uint64)": lambda: R.bits(_k0(), (3,), jnp.uint64),
    "uniform(k0,(5,))": lambda: R.uniform(_k0(), (5,)),
    "uniform(k0)": lambda: R.uniform(_k0()),
    "uniform(k42,(2,3),min=-2,max=3)": lambda: R.uniform(_k42(), (2, 3), minval=-2., maxval=3.),
    "uniform(k0,(4,),float16)": lambda: R.uniform(_k0(), (4,), jnp.float16),
    "uniform(k0,(4,),bfloat16)": lambda: R.uniform(_k0(), (4,), jnp.bfloat16),
    "uniform(k0,(3,),float64)": lambda: R.uniform(_k0(), (3,), jnp.float64),
    "normal(k0,(5,))": lambda: R.normal(_k0(), (5,)),
    "normal(k42,(2,2))": lambda: R.normal(_k42(), (2, 2)),
    "normal(k0,(3,),float16)": lambda: R.normal(_k0(), (3,), jnp.float16),
    "normal(k0,(3,),float64)": lambda: R.normal(_k0(), (3,), jnp.float64),
    "randint(k0,(6,),0,10)": lambda: R.randint(_k0(), (6,), 0, 10),
    "randint(k42,(2,3),-5,5)": lambda: R.randint(_k42(), (2, 3), -5, 5),
    "randint(k0,(6,),0,256,uint8)": lambda: R.randint(_k0(), (6,), 0, 256, jnp.uint8),
    "randint(k0,(6,),-100,100,int8)": lambda: R.randint(_k0(), (6,), -100, 100, jnp.int8),
    "randint(k0,(4,),0,2**40,int64)": lambda: R.randint(_k0(), (4,), 0, 2**40, jnp.int64),
    "permutation(k0,10)": lambda: R.permutation(_k0(), 10),
    "permutation(k42,arange(12).reshape(3,4),axis=1)":
        lambda: R.permutation(_k42(), jnp.arange(12).reshape(3, 4), axis=1),
    "permutation(k42,arange(12).reshape(3,4),independent)":
        lambda: R.permutation(_k42(), jnp.arange(12).reshape(3, 4), independent=True),
    "bernoulli(k0,0.3,(8,))": lambda: R.bernoulli(_k0(), 0.3, (8,)),
    "categorical(k0,logits(2,4))":
        lambda: R.categorical(_k0(), jnp.log(jnp.asarray([[.1, .2, .3, .4], [.4, .3, .2, .1]]))),
    "categorical(k0,logits(4,),shape=(6,))":
        lambda: R.categorical(_k0(), jnp.asarray([0., 1., 2., 3.]), shape=(6,)),
    "categorical(k0,logits(5,),shape=(3,),replace=False)":
        lambda: R.categorical(_k0(), jnp.asarray([0., 1., 2., 3., 4.]), shape=(3,),
                              replace=False),
    "choice(k0,10,(4,))": lambda: R.choice(_k0(), 10, (4,)),
    "choice(k0,10,(4,),replace=False)": lambda: R.choice(_k0(), 10, (4,), replace=False),
    "choice(k0,arange(5.),(6,),p)":
        lambda: R.choice(_k0(), jnp.arange(5.), (6,), p=jnp.asarray(_P5)),
    "choice(k0,5,(3,),replace=False,p)":
        lambda: R.choice(_k0(), 5, (3,), replace=False, p=jnp.asarray(_P5)),
    "truncated_normal(k0,-1,1,(5,))": lambda: R.truncated_normal(_k0(), -1., 1., (5,)),
    "gamma(k0,2.,(5,))": lambda: R.gamma(_k0(), 2., (5,)),
    "gamma(k42,0.5,(4,))": lambda: R.gamma(_k42(), 0.5, (4,)),
    "gamma(k0,[1,2,3])": lambda: R.gamma(_k0(), jnp.asarray([1., 2., 3.])),
    "loggamma(k0,0.1,(3,))": lambda: R.loggamma(_k0(), 0.1, (3,)),
    "beta(k0,2,3,(5,))": lambda: R.beta(_k0(), 2., 3., (5,)),
    "dirichlet(k0,[1,2,3])": lambda: R.dirichlet(_k0(), jnp.asarray([1., 2., 3.])),
    "dirichlet(k0,[.5,.5],(2,))": lambda: R.dirichlet(_k0(), jnp.asarray([.5, .5]), (2,)),
    "exponential(k0,(5,))": lambda: R.exponential(_k0(), (5,)),
    "laplace(k0,(5,))": lambda: R.laplace(_k0(), (5,)),
    "logistic(k0,(5,))": lambda: R.logistic(_k0(), (5,)),
    "gumbel(k0,(5,))": lambda: R.gumbel(_k0(), (5,)),
    "gumbel(k0,(5,),mode=high)": lambda: R.gumbel(_k0(), (5,), mode="high"),
    "poisson(k0,3.,(6,))": lambda: R.poisson(_k0(), 3., (6,)),
    "poisson(k42,25.,(6,))": lambda: R.poisson(_k42(), 25., (6,)),
    "poisson(k0,[0,1,5,50])": lambda: R.poisson(_k0(), jnp.asarray([0., 1., 5., 50.])),
    "multivariate_normal(k0,mean,cov,(3,))":
        lambda: R.multivariate_normal(_k0(), jnp.asarray([1., -1.]),
                                      jnp.asarray([[2., .5], [.5, 1.]]), (3,)),
    "cauchy(k0,(4,))": lambda: R.cauchy(_k0(), (4,)),
    "rademacher(k0,(6,))": lambda: R.rademacher(_k0(), (6,)),
    "t(k0,3.,(4,))": lambda: R.t(_k0(), 3., (4,)),
    "chisquare(k0,3.,(4,))": lambda: R.chisquare(_k0(), 3., (4,)),
    "lognormal(k0,1.,(4,))": lambda: R.lognormal(_k0(), 1., (4,)),
    "pareto(k0,2.,(4,))": lambda: R.pareto(_k0(), 2., (4,)),
    "maxwell(k0,(4,))": lambda: R.maxwell(_k0(), (4,)),
    "vmap(uniform)(split(k0,3))":
        lambda: olympus.vmap(lambda k: R.uniform(k, (2,)))(R.split(_k0(), 3)),
    "jit(normal)(k42)": lambda: olympus.jit(lambda k: R.normal(k, (3,)))(_k42()),
    "bits(k0,(1000,))[-5:]": lambda: R.bits(_k0(), (1000,))[-5:],
    "bits(k0,(5,)) typed": lambda: R.bits(R.key(0), (5,)),
}

#: How far (in units in the last place) a float result may be from the value JAX recorded.
#: The recording was made on one machine; XLA's CPU code generation differs by CPU (vector
#: width, FMA contraction, the polynomial kernels of transcendental functions), and reference
#: JAX on another machine returns the other machine's last bits too. So only results that
#: are bit manipulations of the threefry stream (keys, bits, integers, the plain [0, 1)
#: uniform draw, choices among exact values) are compared bit for bit; every sampler that
#: goes through arithmetic or transcendental functions has a stated bound:
#: * 1 ulp: an affine map of the uniform draw (a multiply-add that XLA may contract).
#: * 4 ulp: one or two transcendental functions of uniform draws (erf_inv, log, log1p,
#:   tan, exp), or a small reduction whose order XLA may change (maxwell), or LAPACK
#:   (multivariate_normal).
#: * 16 ulp: the gamma family (Marsaglia-Tsang: log/exp/sqrt in a loop, then ratios and
#:   sums of gamma draws for beta, dirichlet, chisquare, t; beta(2, 3) measured 3 ulp apart
#:   on an AVX-512 machine while reference JAX there agreed with Olympus).
ULP_BOUNDS = {
    "uniform(k42,(2,3),min=-2,max=3)": 1,
    **dict.fromkeys(("normal", "jit(normal)", "exponential", "laplace", "logistic", "gumbel",
                     "cauchy", "lognormal", "pareto", "truncated_normal", "maxwell",
                     "multivariate_normal"), 4),
    **dict.fromkeys(("gamma", "loggamma", "beta", "dirichlet", "chisquare", "t"), 16),
}


def ulp_bound(name: str) -> int:
    """The stated bound for a case: by its full name, else by its sampler (the name up to
    the first parenthesis); 0 means bit for bit."""
    if name in ULP_BOUNDS:
        return ULP_BOUNDS[name]
    return ULP_BOUNDS.get(name.split("(k", 1)[0], 0)


x64 = olympus.enable_x64


def _check_ref(name, ref):
    dtype, shape, values = ref[name]
    got = np.asarray(CASES[name]())
    assert str(got.dtype) == dtype, (name, got.dtype, dtype)
    assert got.shape == shape, (name, got.shape, shape)
    if "float" in dtype:
        want = np.asarray(values, np.float64).astype(got.dtype).reshape(shape)
        bound = ulp_bound(name)
        if bound:
            np.testing.assert_array_max_ulp(got, want, maxulp=bound)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
            # Bit for bit (also distinguishes -0.0 from 0.0).
            assert got.tobytes() == want.tobytes(), name
    else:
        want = np.asarray(values, dtype=np.dtype(dtype)).reshape(shape)
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("name", sorted(REF_PARTITIONABLE))
def test_matches_jax_default(name):
    with R.threefry_partitionable(True):
        _check_ref(name, REF_PARTITIONABLE)


@pytest.mark.parametrize("name", sorted(REF_LEGACY))
def test_matches_jax_legacy_threefry(name):
    with R.threefry_partitionable(False):
        _check_ref(name, REF_LEGACY)


@pytest.mark.parametrize("name", sorted(REF_X64))
def test_matches_jax_x64(name):
    with x64(), R.threefry_partitionable(True):
        _check_ref(name, REF_X64)


def test_every_case_has_references():
    assert set(REF_PARTITIONABLE) == set(REF_LEGACY) == set(REF_X64) - {
        # JAX rejects this one in 32-bit mode (the maxval overflows int32).
        "randint(k0,(4,),0,2**40,int64)"}
    assert set(REF_X64) == set(CASES)


def test_default_mode_is_partitionable():
    assert olympus.config.olympus_threefry_partitionable is True
    np.testing.assert_array_equal(R.split(_k0()), np.array(
        REF_PARTITIONABLE["split(k0)"][2], np.uint32).reshape(2, 2))


def test_mode_switch_is_not_cached_across_modes():
    k = _k0()
    a = np.asarray(R.uniform(k, (5,)))
    with R.threefry_partitionable(False):
        b = np.asarray(R.uniform(k, (5,)))
    c = np.asarray(R.uniform(k, (5,)))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    olympus.config.update("olympus_threefry_partitionable", False)
    try:
        np.testing.assert_array_equal(R.uniform(k, (5,)), b)
    finally:
        olympus.config.update("olympus_threefry_partitionable", True)


# --- the threefry2x32 primitive -----------------------------------------------------------------

#: Random123's known-answer vectors for Threefry-2x32 with 20 rounds:
#: (key0, key1, count0, count1) -> (out0, out1).
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
    ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
    ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0)),
]


def _np_threefry(k0, k1, x0, x1):
    """A NumPy Threefry-2x32 (20 rounds) for cross-checking."""
    u = np.uint32
    k0, k1 = u(k0), u(k1)
    x0, x1 = np.asarray(x0, u).copy(), np.asarray(x1, u).copy()
    ks = [k0, k1, u(k0 ^ k1 ^ u(0x1BD11BDA))]
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    with np.errstate(over="ignore"):
        x0 += ks[0]
        x1 += ks[1]
        for i in range(5):
            for r in rot[i % 2]:
                x0 += x1
                x1 = (x1 << u(r)) | (x1 >> u(32 - r))
                x1 ^= x0
            x0 += ks[(i + 1) % 3]
            x1 += ks[(i + 2) % 3] + u(i + 1)
    return x0, x1


@pytest.mark.parametrize("key,count,expected", KAT)
@pytest.mark.parametrize("how", ["eager", "jit", "vmap"])
def test_threefry_known_answers(key, count, expected, how):
    u = np.uint32
    args = [u(key[0]), u(key[1]), np.array([count[0]], u), np.array([count[1]], u)]
    if how == "eager":
        out = bind(P.threefry2x32_p, *args)
    elif how == "jit":
        out = olympus.jit(lambda *a: bind(P.threefry2x32_p, *a))(*args)
    else:
        out = olympus.vmap(lambda *a: bind(P.threefry2x32_p, *a), in_axes=(None, None, 0, 0))(
            *args)
    assert [int(np.asarray(o)[0]) for o in out] == list(expected)
    assert [int(o[0]) for o in _np_threefry(*key, [count[0]], [count[1]])] == list(expected)


def test_threefry_2x32_matches_numpy_reference():
    key = np.array([0x13198a2e, 0x03707344], np.uint32)
    count = np.arange(11, dtype=np.uint32)  # odd length: padded with one zero
    got = np.asarray(R.threefry_2x32(key, count))
    x = np.concatenate([count, [0]]).astype(np.uint32)
    y0, y1 = _np_threefry(key[0], key[1], x[:6], x[6:])
    np.testing.assert_array_equal(got, np.concatenate([y0, y1])[:11])


def test_bits_match_numpy_reference_both_modes():
    key = np.asarray(R.PRNGKey(1234))
    with R.threefry_partitionable(True):
        got = np.asarray(R.bits(key, (37, 3)))
    y0, y1 = _np_threefry(key[0], key[1], np.zeros(111, np.uint32),
                          np.arange(111, dtype=np.uint32))
    np.testing.assert_array_equal(got, (y0 ^ y1).reshape(37, 3))
    with R.threefry_partitionable(False):
        got = np.asarray(R.bits(key, (7,)))
    c = np.concatenate([np.arange(7), [0]]).astype(np.uint32)
    y0, y1 = _np_threefry(key[0], key[1], c[:4], c[4:])
    np.testing.assert_array_equal(got, np.concatenate([y0, y1])[:7])


# --- keys ---------------------------------------------------------------------------------------


def test_raw_key_is_uint32_pair():
    k = R.PRNGKey(7)
    assert k.shape == (2,) and k.dtype == np.uint32
    np.testing.assert_array_equal(k, [0, 7])
    np.testing.assert_array_equal(R.key_data(k), [0, 7])
    assert R.key_impl(k) == "threefry2x32"


def test_typed_keys():
    k = R.key(7)
    assert isinstance(k, R.PRNGKeyArray)
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert str(k.dtype) == "key<fry>" and k.dtype == R.key_dtype()
    assert "key<fry>" in repr(k)
    np.testing.assert_array_equal(R.key_data(k), R.PRNGKey(7))
    ks = R.split(k, 4)
    assert isinstance(ks, R.PRNGKeyArray) and ks.shape == (4,) and len(ks) == 4
    np.testing.assert_array_equal(R.key_data(ks), R.split(R.PRNGKey(7), 4))
    np.testing.assert_array_equal(R.key_data(ks[2]), R.split(R.PRNGKey(7), 4)[2])
    assert [kk.shape for kk in ks] == [()] * 4
    grid = R.split(k, (2, 3))
    assert grid.shape == (2, 3)
    assert grid.reshape(6).shape == (6,) and grid.ravel().shape == (6,)
    np.testing.assert_array_equal(R.key_data(grid[1, 2]), R.key_data(ks.reshape(4)[0]) * 0
                                  + R.split(R.PRNGKey(7), (2, 3))[1, 2])
    assert bool(R.key(3) == R.key(3)) and bool(R.key(3) != R.key(4))
    np.testing.assert_array_equal(ks == ks, [True] * 4)
    folded = R.fold_in(k, 3)
    assert isinstance(folded, R.PRNGKeyArray)
    np.testing.assert_array_equal(R.key_data(folded), R.fold_in(R.PRNGKey(7), 3))
    w = R.wrap_key_data(R.PRNGKey(7))
    assert isinstance(w, R.PRNGKeyArray) and bool(w == k)
    # A new key array over the same data (JAX 0.10.2: `clone(k) is k` is False).
    assert R.clone(k) is not k
    np.testing.assert_array_equal(R.key_data(R.clone(k)), R.key_data(k))
    # Samplers give the same values for typed and raw keys.
    np.testing.assert_array_equal(R.normal(k, (3,)), R.normal(R.PRNGKey(7), (3,)))


def test_typed_keys_through_jit_vmap_and_control_flow():
    k = R.key(0)
    out = olympus.jit(lambda k: R.split(k, 3))(k)
    assert isinstance(out, R.PRNGKeyArray) and out.shape == (3,)
    np.testing.assert_array_equal(R.key_data(out), R.split(R.PRNGKey(0), 3))
    vals = olympus.vmap(lambda k: R.uniform(k, (2,)))(out)
    for i in range(3):
        np.testing.assert_array_equal(vals[i], R.uniform(out[i], (2,)))
    folded = olympus.vmap(lambda k: R.fold_in(k, 5))(out)
    assert isinstance(folded, R.PRNGKeyArray) and folded.shape == (3,)

    def body(i, carry):
        key, acc = carry
        key, sub = R.split(key)
        return key, acc + R.uniform(sub)

    key, acc = olympus.lax.fori_loop(0, 4, body, (k, jnp.float32(0)))
    assert isinstance(key, R.PRNGKeyArray)
    ref_key, ref = R.key(0), 0.0
    for _ in range(4):
        ref_key, sub = R.split(ref_key)
        ref = ref + float(R.uniform(sub))
    np.testing.assert_allclose(float(acc), ref, rtol=1e-6)
    assert bool(key == ref_key)


def test_seeds():
    np.testing.assert_array_equal(R.PRNGKey(np.int8(-1)), [0, 0xFFFFFFFF])
    np.testing.assert_array_equal(R.PRNGKey(np.uint8(200)), [0, 200])
    with x64():
        np.testing.assert_array_equal(R.PRNGKey(np.int64(-2)), [0xFFFFFFFF, 0xFFFFFFFE])
        np.testing.assert_array_equal(R.PRNGKey(np.uint64(2**63 + 9)), [2**31, 9])
    # Traced seeds work under jit and vmap.
    np.testing.assert_array_equal(olympus.jit(R.PRNGKey)(jnp.asarray(5)), [0, 5])
    np.testing.assert_array_equal(olympus.vmap(R.PRNGKey)(jnp.arange(3)),
                                  [[0, 0], [0, 1], [0, 2]])


@pytest.mark.parametrize("call,exc", [
    (lambda: R.PRNGKey(1.5), TypeError),
    (lambda: R.PRNGKey(True), TypeError),
    (lambda: R.PRNGKey(np.arange(2)), TypeError),
    (lambda: R.key(R.key(0)), TypeError),
    (lambda: R.PRNGKey(0, impl="philox9x9"), ValueError),
    (lambda: R.split(R.split(R.PRNGKey(0))), ValueError),
    (lambda: R.uniform(R.split(R.key(0)), (2,)), ValueError),
    (lambda: R.uniform(np.zeros(3, np.uint32)), TypeError),
    (lambda: R.uniform(np.zeros(2, np.int32)), TypeError),
    (lambda: R.uniform("key"), TypeError),
    (lambda: R.fold_in(R.PRNGKey(0), -1), OverflowError),
    (lambda: R.fold_in(R.PRNGKey(0), np.arange(2)), TypeError),
    (lambda: R.bits(R.PRNGKey(0), (2,), np.int32), ValueError),
    (lambda: R.uniform(R.PRNGKey(0), (2,), np.int32), ValueError),
    (lambda: R.normal(R.PRNGKey(0), (2,), np.int32), ValueError),
    (lambda: R.randint(R.PRNGKey(0), (2,), 0, 5, np.float32), TypeError),
    (lambda: R.uniform(R.PRNGKey(0), (2,), minval=np.zeros(3)), TypeError),  # JAX: mul's shapes
    (lambda: R.choice(R.PRNGKey(0), 3, (5,), replace=False), ValueError),
    (lambda: R.choice(R.PRNGKey(0), 3, 5), TypeError),
    (lambda: R.choice(R.PRNGKey(0), 3, (2,), p=jnp.ones(4) / 4), ValueError),
    (lambda: R.permutation(R.PRNGKey(0), 2.5), TypeError),
    (lambda: R.bernoulli(R.PRNGKey(0), 1), TypeError),
    (lambda: R.bernoulli(R.PRNGKey(0), 0.5, mode="mid"), ValueError),
    (lambda: R.gumbel(R.PRNGKey(0), mode="mid"), ValueError),
    (lambda: R.dirichlet(R.PRNGKey(0), 1.0), ValueError),
    (lambda: R.multivariate_normal(R.PRNGKey(0), jnp.zeros(2), jnp.eye(3)), ValueError),
    (lambda: R.multivariate_normal(R.PRNGKey(0), jnp.zeros(2), jnp.eye(2), method="lu"),
     ValueError),
    (lambda: R.categorical(R.PRNGKey(0), jnp.zeros(3), shape=(4,), replace=False),
     ValueError),
])
def test_errors(call, exc):
    with pytest.raises(exc):
        call()


def test_permutation_of_traced_int_needs_concrete():
    with pytest.raises(Exception, match="concrete|Concretization|traced"):
        olympus.jit(lambda n: R.permutation(R.PRNGKey(0), n))(jnp.asarray(5))


# --- shapes and dtypes --------------------------------------------------------------------------

SAMPLERS = {
    "bits": lambda k, s: R.bits(k, s),
    "uniform": lambda k, s: R.uniform(k, s, minval=-1.0, maxval=2.0),
    "normal": lambda k, s: R.normal(k, s),
    "normal_c64": lambda k, s: R.normal(k, s, jnp.complex64),
    "randint": lambda k, s: R.randint(k, s, -3, 7),
    "randint_u8": lambda k, s: R.randint(k, s, 0, 256, jnp.uint8),
    "bernoulli": lambda k, s: R.bernoulli(k, 0.3, s),
    "bernoulli_high": lambda k, s: R.bernoulli(k, 0.3, s, mode="high"),
    "categorical": lambda k, s: R.categorical(k, jnp.asarray([0.0, 1.0, 2.0]), shape=s),
    "choice": lambda k, s: R.choice(k, 7, s),
    "choice_p": lambda k, s: R.choice(k, 4, s, p=jnp.asarray([.1, .2, .3, .4])),
    "truncated_normal": lambda k, s: R.truncated_normal(k, -0.5, 2.0, s),
    "gamma": lambda k, s: R.gamma(k, 1.5, s),
    "loggamma": lambda k, s: R.loggamma(k, 0.3, s),
    "beta": lambda k, s: R.beta(k, 2.0, 0.5, s),
    "dirichlet": lambda k, s: R.dirichlet(k, jnp.asarray([1.0, 2.0]), s),
    "exponential": lambda k, s: R.exponential(k, s),
    "laplace": lambda k, s: R.laplace(k, s),
    "logistic": lambda k, s: R.logistic(k, s),
    "gumbel": lambda k, s: R.gumbel(k, s),
    "gumbel_high": lambda k, s: R.gumbel(k, s, mode="high"),
    "gumbel_highest": lambda k, s: R.gumbel(k, s, mode="highest"),
    "poisson": lambda k, s: R.poisson(k, 4.0, s),
    "poisson_large": lambda k, s: R.poisson(k, 40.0, s),
    "multivariate_normal": lambda k, s: R.multivariate_normal(
        k, jnp.asarray([0.0, 1.0]), jnp.asarray([[1.0, 0.3], [0.3, 2.0]]), s),
    "cauchy": lambda k, s: R.cauchy(k, s),
    "t": lambda k, s: R.t(k, 4.0, s),
    "chisquare": lambda k, s: R.chisquare(k, 2.0, s),
    "lognormal": lambda k, s: R.lognormal(k, 0.5, s),
    "pareto": lambda k, s: R.pareto(k, 3.0, s),
    "rademacher": lambda k, s: R.rademacher(k, s),
    "maxwell": lambda k, s: R.maxwell(k, s),
    "rayleigh": lambda k, s: R.rayleigh(k, 2.0, s),
    "geometric": lambda k, s: R.geometric(k, 0.3, s),
}

_EVENT = {"dirichlet": (2,), "multivariate_normal": (2,)}


def _assert_close(a, b, name=""):
    """Equal integers/bools; floats equal up to a few ulps. (A sampler run inside a user's
    jit may differ in the last bit from the same sampler called eagerly: XLA folds the
    constants the user's function closes over and fuses differently; vmap outside jit
    runs op by op, without XLA's fusion.)"""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype)
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_sampler_shapes(name, shape):
    out = SAMPLERS[name](R.PRNGKey(3), shape)
    assert tuple(out.shape) == shape + _EVENT.get(name, ())


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_matches_eager(name):
    k = R.PRNGKey(11)
    eager = SAMPLERS[name](k, (4,))
    jitted = olympus.jit(lambda k: SAMPLERS[name](k, (4,)))(k)
    _assert_close(eager, jitted, name)


_TYPED_VMAP = ("uniform", "normal", "randint", "choice", "gamma")


@pytest.mark.parametrize("name,typed", [(n, False) for n in sorted(SAMPLERS)]
                         + [(n, True) for n in _TYPED_VMAP])
def test_vmap_over_split_keys_matches_loop(name, typed):
    k = R.key(5) if typed else R.PRNGKey(5)
    keys = R.split(k, 3)
    jitted = olympus.jit(olympus.vmap(lambda kk: SAMPLERS[name](kk, (4,))))(keys)
    for i in range(3):
        _assert_close(jitted[i], SAMPLERS[name](keys[i], (4,)), name)
    if typed or name in ("uniform", "normal", "gamma", "poisson", "bernoulli"):
        # vmap outside jit (op by op).
        _assert_close(olympus.vmap(lambda kk: SAMPLERS[name](kk, (4,)))(keys), jitted, name)


def test_vmap_permutation_and_split():
    keys = R.split(R.PRNGKey(8), 3)
    perms = olympus.vmap(lambda k: R.permutation(k, 6))(keys)
    subs = olympus.vmap(lambda k: R.split(k, 2))(keys)
    folds = olympus.vmap(R.fold_in, in_axes=(0, 0))(keys, jnp.arange(3, dtype=jnp.uint32))
    for i in range(3):
        np.testing.assert_array_equal(perms[i], R.permutation(keys[i], 6))
        np.testing.assert_array_equal(subs[i], R.split(keys[i], 2))
        np.testing.assert_array_equal(folds[i], R.fold_in(keys[i], i))


def test_vmap_over_parameters():
    k = R.PRNGKey(0)
    a = jnp.asarray([0.5, 1.0, 4.0])
    got = olympus.jit(olympus.vmap(lambda a: R.gamma(k, a, (3,))))(a)
    for i in range(3):
        _assert_close(got[i], R.gamma(k, a[i], (3,)))
    lam = jnp.asarray([1.0, 20.0])
    got = olympus.jit(olympus.vmap(lambda l: R.poisson(k, l, (5,))))(lam)
    for i in range(2):
        _assert_close(got[i], R.poisson(k, lam[i], (5,)))
    lo = jnp.asarray([-1.0, 0.0])
    got = olympus.vmap(lambda m: R.uniform(k, (3,), minval=m, maxval=m + 1))(lo)
    _assert_close(got[1], R.uniform(k, (3,), minval=0.0, maxval=1.0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_dtypes(dtype):
    k = R.PRNGKey(0)
    for f in (R.uniform, R.normal, R.exponential, R.laplace, R.logistic, R.gumbel):
        out = f(k, (50,), jnp.dtype(dtype) if dtype != "bfloat16" else jnp.bfloat16)
        assert out.dtype == np.dtype(jnp.bfloat16 if dtype == "bfloat16" else dtype)
        assert np.all(np.isfinite(np.asarray(out, np.float32)))
    u = np.asarray(R.uniform(k, (1000,), jnp.bfloat16 if dtype == "bfloat16" else dtype),
                   np.float32)
    assert u.min() >= 0 and u.max() < 1


def test_default_dtypes():
    k = R.PRNGKey(0)
    assert R.uniform(k).dtype == np.float32
    assert R.normal(k).dtype == np.float32
    assert R.randint(k, (), 0, 3).dtype == np.int32
    assert R.bits(k).dtype == np.uint32
    assert R.bernoulli(k).dtype == np.bool_
    assert R.poisson(k, 2.0).dtype == np.int32
    assert R.permutation(k, 4).dtype == np.int32
    with x64():
        assert R.uniform(k).dtype == np.float64
        assert R.randint(k, (), 0, 3).dtype == np.int64
        assert R.bits(k).dtype == np.uint64
        assert R.poisson(k, 2.0).dtype == np.int64


def test_uniform_range_and_parameter_broadcast():
    k = R.PRNGKey(0)
    lo = jnp.asarray([[-5.0], [10.0]])
    out = np.asarray(R.uniform(k, (2, 500), minval=lo, maxval=lo + 1))
    assert (out[0] >= -5).all() and (out[0] < -4).all()
    assert (out[1] >= 10).all() and (out[1] < 11).all()


def test_randint_range_edges():
    k = R.PRNGKey(1)
    out = np.asarray(R.randint(k, (2000,), -2, 3))
    assert set(out.tolist()) == {-2, -1, 0, 1, 2}
    assert (np.asarray(R.randint(k, (10,), 5, 5)) == 5).all()  # empty range gives minval
    assert (np.asarray(R.randint(k, (10,), 5, 2)) == 5).all()
    u8 = np.asarray(R.randint(k, (4000,), 0, 256, jnp.uint8))
    assert u8.dtype == np.uint8 and u8.max() > 250 and u8.min() < 5
    i8 = np.asarray(R.randint(k, (4000,), -1000, 1000, jnp.int8))
    assert i8.min() == -128 or i8.min() < -120
    full = np.asarray(R.randint(k, (4000,), np.iinfo(np.int32).min, np.iinfo(np.int32).max))
    assert full.min() < -2**30 and full.max() > 2**30
    per = np.asarray(R.randint(k, (3, 1000), jnp.asarray([[0], [10], [100]]),
                               jnp.asarray([[2], [12], [102]])))
    for row, lo in zip(per, (0, 10, 100), strict=True):
        assert set(row.tolist()) == {lo, lo + 1}


def test_permutation_and_shuffle():
    k = R.PRNGKey(3)
    p = np.asarray(R.permutation(k, 50))
    assert sorted(p.tolist()) == list(range(50))
    x = jnp.arange(12).reshape(3, 4)
    rows = np.asarray(R.permutation(k, x))  # permutes rows together
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, np.asarray(x).tolist()))
    cols = np.asarray(R.permutation(k, x, axis=1))
    assert sorted(map(tuple, cols.T.tolist())) == sorted(map(tuple, np.asarray(x).T.tolist()))
    ind = np.asarray(R.permutation(k, x, axis=1, independent=True))
    for r in range(3):
        assert sorted(ind[r].tolist()) == sorted(np.asarray(x)[r].tolist())
    np.testing.assert_array_equal(R.shuffle(k, x, 1), ind)
    # Large arrays need more than one sort round (JAX's heuristic: ceil(3 ln n / ln 2^32)).
    big = np.asarray(R.permutation(k, 3000))
    assert sorted(big.tolist()) == list(range(3000))


def test_choice():
    k = R.PRNGKey(4)
    no_rep = np.asarray(R.choice(k, 20, (10,), replace=False))
    assert len(set(no_rep.tolist())) == 10
    a = jnp.arange(24).reshape(4, 6)
    rows = np.asarray(R.choice(k, a, (2, 3)))
    assert rows.shape == (2, 3, 6)
    cols = np.asarray(R.choice(k, a, (5,), axis=1))
    assert cols.shape == (4, 5)
    p = jnp.asarray([0.0, 0.0, 1.0, 0.0])
    assert (np.asarray(R.choice(k, 4, (20,), p=p)) == 2).all()
    nr = np.asarray(R.choice(k, 4, (2,), replace=False, p=jnp.asarray([0.5, 0.0, 0.5, 0.0])))
    assert sorted(nr.tolist()) == [0, 2]
    assert R.choice(k, 5, (0,)).shape == (0,)


def test_categorical_axis_and_replace():
    k = R.PRNGKey(2)
    logits = jnp.log(jnp.asarray([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    np.testing.assert_array_equal(R.categorical(k, logits), [2, 0])
    np.testing.assert_array_equal(R.categorical(k, logits.T, axis=0), [2, 0])
    out = R.categorical(k, logits, shape=(5, 2))
    np.testing.assert_array_equal(out, [[2, 0]] * 5)
    nr = np.asarray(R.categorical(k, jnp.zeros((2, 6)), shape=(6, 2), replace=False))
    for j in range(2):
        assert sorted(nr[:, j].tolist()) == list(range(6))


def test_truncated_normal_bounds():
    k = R.PRNGKey(9)
    out = np.asarray(R.truncated_normal(k, -0.1, 0.2, (5000,)))
    assert (out > -0.1).all() and (out < 0.2).all()
    lo = jnp.asarray([-3.0, 1.0])
    out = np.asarray(R.truncated_normal(k, lo, lo + 0.5, (100, 2)))
    assert (out[:, 0] > -3).all() and (out[:, 0] < -2.5).all()
    assert (out[:, 1] > 1).all() and (out[:, 1] < 1.5).all()


def test_multivariate_normal_fallback_cholesky(monkeypatch):
    from olympus.random import _samplers

    cov = jnp.asarray([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    monkeypatch.setattr(_samplers, "_has_prim", lambda name: None)
    L = np.asarray(olympus.jit(_samplers._cholesky)(cov))
    np.testing.assert_allclose(L, np.linalg.cholesky(np.asarray(cov)), rtol=1e-6, atol=1e-6)
    batched = np.asarray(_samplers._cholesky(jnp.stack([cov, 2 * cov])))
    np.testing.assert_allclose(batched[1], np.linalg.cholesky(2 * np.asarray(cov)), rtol=1e-6)
    out = R.multivariate_normal(R.PRNGKey(0), jnp.zeros(3), cov, (4,))
    assert out.shape == (4, 3)


def test_reparameterization_gradients():
    k = R.PRNGKey(0)
    g = olympus.grad(lambda m: R.uniform(k, (3,), minval=m, maxval=m + 2.0).sum())(1.0)
    np.testing.assert_allclose(g, 3.0)
    z = R.normal(k, (4,))
    g = olympus.grad(lambda s: (s * R.normal(k, (4,))).sum())(2.0)
    np.testing.assert_allclose(g, np.asarray(z).sum(), rtol=1e-6)
    g = olympus.grad(lambda lo: R.truncated_normal(k, lo, 5.0, (3,)).sum())(-10.0)
    assert np.isfinite(g)


# --- statistics ---------------------------------------------------------------------------------

N = 10_000


def _mean_var(x):
    x = np.asarray(x, np.float64)
    return x.mean(axis=0), x.var(axis=0)


def _check_moments(x, mean, var, mean_tol=None, var_rtol=0.1):
    m, v = _mean_var(x)
    sd = math.sqrt(var)
    tol = 5 * sd / math.sqrt(len(np.asarray(x))) if mean_tol is None else mean_tol
    np.testing.assert_allclose(m, mean, atol=tol)
    np.testing.assert_allclose(v, var, rtol=var_rtol)


_TN_VAR = 1 - 2 * (math.exp(-0.5) / math.sqrt(2 * math.pi)) / math.erf(1 / math.sqrt(2))

MOMENTS = {
    "uniform": (lambda k: R.uniform(k, (N,)), 0.5, 1 / 12),
    "uniform_ab": (lambda k: R.uniform(k, (N,), minval=-3.0, maxval=5.0), 1.0, 64 / 12),
    "normal": (lambda k: R.normal(k, (N,)), 0.0, 1.0),
    "randint": (lambda k: R.randint(k, (N,), 0, 10), 4.5, 8.25),
    "bernoulli": (lambda k: R.bernoulli(k, 0.3, (N,)), 0.3, 0.21),
    "truncated_normal": (lambda k: R.truncated_normal(k, -1.0, 1.0, (N,)), 0.0, _TN_VAR),
    "gamma_3": (lambda k: R.gamma(k, 3.0, (N,)), 3.0, 3.0),
    "gamma_0.5": (lambda k: R.gamma(k, 0.5, (N,)), 0.5, 0.5),
    "beta": (lambda k: R.beta(k, 2.0, 3.0, (N,)), 0.4, 0.04),
    "exponential": (lambda k: R.exponential(k, (N,)), 1.0, 1.0),
    "laplace": (lambda k: R.laplace(k, (N,)), 0.0, 2.0),
    "logistic": (lambda k: R.logistic(k, (N,)), 0.0, math.pi ** 2 / 3),
    "gumbel": (lambda k: R.gumbel(k, (N,)), 0.5772156649, math.pi ** 2 / 6),
    "gumbel_high": (lambda k: R.gumbel(k, (N,), mode="high"), 0.5772156649, math.pi ** 2 / 6),
    "poisson_3": (lambda k: R.poisson(k, 3.0, (N,)), 3.0, 3.0),
    "poisson_30": (lambda k: R.poisson(k, 30.0, (N,)), 30.0, 30.0),
    "chisquare": (lambda k: R.chisquare(k, 3.0, (N,)), 3.0, 6.0),
    "t": (lambda k: R.t(k, 10.0, (N,)), 0.0, 10 / 8),
    "rademacher": (lambda k: R.rademacher(k, (N,)), 0.0, 1.0),
    "geometric": (lambda k: R.geometric(k, 0.25, (N,)), 4.0, 12.0),
    "rayleigh": (lambda k: R.rayleigh(k, 1.0, (N,)), math.sqrt(math.pi / 2),
                 (4 - math.pi) / 2),
    "maxwell": (lambda k: R.maxwell(k, (N,)), 2 * math.sqrt(2 / math.pi),
                3 - 8 / math.pi),
    "lognormal": (lambda k: R.lognormal(k, 0.5, (N,)), math.exp(0.125),
                  (math.exp(0.25) - 1) * math.exp(0.25)),
    "pareto": (lambda k: R.pareto(k, 5.0, (N,)), 1.25, 5 / (16 * 3)),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_moments(name):
    f, mean, var = MOMENTS[name]
    _check_moments(f(R.PRNGKey(2024)), mean, var, var_rtol=0.2 if name == "pareto" else 0.1)


def test_moments_x64_normal_and_gamma():
    with x64():
        k = R.PRNGKey(7)
        _check_moments(R.normal(k, (N,)), 0.0, 1.0)
        _check_moments(R.gamma(k, 2.0, (N,)), 2.0, 2.0)
        _check_moments(R.uniform(k, (N,)), 0.5, 1 / 12)


def test_dirichlet_moments():
    alpha = np.array([1.0, 2.0, 3.0])
    x = np.asarray(R.dirichlet(R.PRNGKey(1), jnp.asarray(alpha), (N,)))
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    a0 = alpha.sum()
    np.testing.assert_allclose(x.mean(0), alpha / a0, atol=0.01)
    np.testing.assert_allclose(x.var(0), alpha * (a0 - alpha) / (a0 ** 2 * (a0 + 1)),
                               rtol=0.1)


def test_categorical_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    x = np.asarray(R.categorical(R.PRNGKey(1), jnp.log(jnp.asarray(p)), shape=(N,)))
    np.testing.assert_allclose(np.bincount(x, minlength=4) / N, p, atol=0.02)
    c = np.asarray(R.choice(R.PRNGKey(2), 4, (N,), p=jnp.asarray(p)))
    np.testing.assert_allclose(np.bincount(c, minlength=4) / N, p, atol=0.02)


def test_multivariate_normal_moments():
    mean = np.array([1.0, -2.0])
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = np.asarray(R.multivariate_normal(R.PRNGKey(3), jnp.asarray(mean), jnp.asarray(cov),
                                         (N,)))
    # 5 standard errors: sd/sqrt(N) for the means, ~sqrt(2/N) * var for the covariances.
    np.testing.assert_allclose(x.mean(0), mean, atol=0.075)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.15)


def test_uniform_bits_are_uniform():
    # Every bit of the generated words is set about half the time.
    b = np.asarray(R.bits(R.PRNGKey(0), (N,)))
    frac = np.array([((b >> i) & 1).mean() for i in range(32)])
    np.testing.assert_allclose(frac, 0.5, atol=0.025)


def test_split_keys_give_independent_streams():
    keys = R.split(R.PRNGKey(0), 4)
    x = np.stack([np.asarray(R.normal(k, (N,))) for k in keys])
    c = np.corrcoef(x)
    np.testing.assert_allclose(c[np.triu_indices(4, 1)], 0.0, atol=0.05)


def test_ulp_bounds_cover_every_inexact_sampler():
    """Every float case either is exact by construction or has a stated bound."""
    exact_floats = {"uniform(k0)", "uniform(k0,(5,))", "uniform(k0,(3,),float64)",
                    "uniform(k0,(4,),float16)", "uniform(k0,(4,),bfloat16)",
                    "vmap(uniform)(split(k0,3))", "choice(k0,arange(5.),(6,),p)"}
    for name, (dtype, _, _) in REF_X64.items():
        if "float" in dtype:
            assert (ulp_bound(name) > 0) != (name in exact_floats), name
    assert ulp_bound("beta(k0,2,3,(5,))") == 16
    assert ulp_bound("jit(normal)(k42)") == 4
    assert ulp_bound("bits(k0,(5,))") == 0
