// QCOMPARE for scoped enums (QtTest prints only what it knows how to print): compares and
// reports their numeric values.
#pragma once

#include <QtTest>

#define QCOMPARE_ENUM(actual, expected) QCOMPARE(static_cast<int>(actual), static_cast<int>(expected))
