# A test that fails with one sentence: for checks whose input is missing, so that they never
# pass on nothing.   cmake -DMESSAGE="..." -P FailWithMessage.cmake
message(FATAL_ERROR "${MESSAGE}")
