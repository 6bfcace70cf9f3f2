"""The runtime protocol: every name the rewritten kernel uses, in one place.

``transform.py`` rewrites a kernel into calls on a runtime object bound to the global ``__ctx``
(a :class:`gpulab.sim.context.Context`). This module is the contract between the two: the
transform builds calls only from these constants, and ``tests/test_sim_extension.py`` checks
that ``Context`` defines a method for each of them. To see the protocol in use, print a
rewritten kernel: ``gpulab.sim.show_transformed(kernel)``.
"""

# -- names bound in the rewritten function's globals and locals ------------------------------
CTX = "__ctx"  # the runtime (Context) of the launch
UNDEF = "__U"  # the value of a local before its first assignment (context.UNDEF)
FRAME = "__frame"  # the function's frame, from FN_ENTER, handed back to FN_EXIT
TEMP_PREFIX = "__"  # temporaries the transform introduces: __t1, __it2, __a3, ...


class Runtime:
    """Method names of the runtime, grouped by the construct they implement.

    Each is a method of ``Context``; its docstring says what it does with the active mask.
    """

    # statements and assignment
    STMT = "stmt"  # stmt(line): before every statement; counts, traces, budget
    SEL = "sel"  # sel(new, old): a variable's value after `x = new` under the mask
    F64 = "f64"  # f64(literal): float literals are float64, as numba types them
    ARITH = "arith"  # arith(a, "Add", b): a binary operator, with numba's uint64/int64 rules
    GETITEM = "getitem"  # getitem(obj, i): obj[i], also for a tuple and a per-lane i
    FROM_END = "from_end"  # from_end(-k): a literal negative index, `a[-1]`, counts from the end
    ASSERT = "assert_"  # assert_(test)
    RAISE = "raise_"  # raise_()

    # if / else, and expressions that branch
    IF = "if_"  # if_(test): push a frame
    THEN = "then_"  # then_() -> run the body? (narrows the mask)
    ELSE = "else_"  # else_() -> run the else body? (the other lanes)
    ENDIF = "endif"  # endif(): pop, restore the mask
    LAND = "land"  # land(left, lambda: right): `and`, per lane
    LOR = "lor"  # lor(left, lambda: right): `or`, per lane
    LNOT = "lnot"  # lnot(value): `not`, per lane
    IFEXP = "ifexp"  # ifexp(test, lambda: a, lambda: b): `a if test else b`

    # loops
    LOOP_ENTER = "loop_enter"  # loop_enter(): push a loop frame
    LOOP_TEST = "loop_test"  # loop_test(lambda: test) -> iterate again? (while)
    RANGE = "range_"  # range_(*args) -> state of `for ... in range(...)`
    ITER = "iter_"  # iter_(seq) -> state of `for ... in <tuple>`
    LOOP_NEXT = "loop_next"  # loop_next(state) -> iterate again? (for); sets state.value
    LOOP_EXIT = "loop_exit"  # loop_exit(): pop, restore the mask
    NO_BREAK = "no_break"  # no_break() -> lanes that left the loop just closed without `break`
    BREAK = "brk"  # brk(): the active lanes leave the loop
    BREAK_DONE = "brk_done"  # brk_done() -> no lane left in the loop: Python `break`
    CONTINUE = "cont"  # cont(): the active lanes skip to the next iteration
    CONTINUE_DONE = "cont_done"  # cont_done() -> no lane left in this iteration: `continue`

    # functions
    FN_ENTER = "fn_enter"  # fn_enter() -> frame
    RETURN = "ret"  # ret(value): the active lanes return `value`
    RETURN_DONE = "ret_done"  # ret_done() -> every lane returned: Python `return`
    FN_EXIT = "fn_exit"  # fn_exit(frame) -> the function's value (merged per lane)

    @classmethod
    def names(cls):
        """Every runtime method name the transform may emit."""
        return sorted(v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str))


#: ``break``/``continue``/``return``: (the call that takes lanes out, the test whether none is left)
ESCAPES = {
    "break": (Runtime.BREAK, Runtime.BREAK_DONE),
    "continue": (Runtime.CONTINUE, Runtime.CONTINUE_DONE),
    "return": (Runtime.RETURN, Runtime.RETURN_DONE),
}

#: keyword the transform adds to ``cuda.atomic.<op>(...)`` whose old value the kernel discards
#: (a statement of its own), so the atomic can be counted as a RED rather than an ATOM
RESULT_UNUSED = "_gpulab_result_unused"
