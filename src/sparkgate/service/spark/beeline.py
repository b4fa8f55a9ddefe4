"""Running the beeline that PySpark ships (Hive's BeeLine on Spark's jars).

PySpark installs a ``beeline`` script next to the Python interpreter, but it
finds Spark by running ``python3`` from ``PATH``, which fails outside an
activated virtual environment ("Could not find valid SPARK_HOME").
``sparkgate beeline`` runs the same script with ``SPARK_HOME`` set to the
PySpark package and ``JAVA_HOME`` set to the Java the gateway would use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from sparkgate.service.spark.java import find_java, spark_home

__all__ = ["beeline_command"]


def beeline_command(args: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that run beeline with ``args``.

    Raises:
        JavaNotFoundError: no Java 17 or 21.
    """
    home = spark_home()
    env = dict(os.environ)
    env["SPARK_HOME"] = str(home)
    env["JAVA_HOME"] = str(find_java().home)
    return [str(home / "bin" / "beeline"), *args], env
