"""Files on any file system the Spark session reaches (Hadoop's ``FileSystem``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Files"]


class Files:
    """Hadoop's file system, so versions work on any file system Spark writes."""

    def __init__(self, spark: SparkSession) -> None:
        sc = spark.sparkContext
        self._jvm: Any = sc._jvm
        self._conf = sc._jsc.hadoopConfiguration()

    def _path(self, path: str) -> tuple[Any, Any]:
        hadoop = self._jvm.org.apache.hadoop.fs.Path(path)
        fs = hadoop.getFileSystem(self._conf)
        if str(fs.getScheme()) == "file":
            # Local files without Hadoop's .crc sidecars: a file edited by hand (a
            # compiled plan) would otherwise fail its checksum.
            fs = fs.getRawFileSystem()
        return fs, hadoop

    def exists(self, path: str) -> bool:
        fs, hadoop = self._path(path)
        return bool(fs.exists(hadoop))

    def read(self, path: str) -> str | None:
        fs, hadoop = self._path(path)
        if not fs.exists(hadoop):
            return None
        stream = fs.open(hadoop)
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write(self, path: str, text: str) -> None:
        """Replace ``path``'s content atomically (write aside, then rename)."""
        fs, hadoop = self._path(path)
        aside = self._jvm.org.apache.hadoop.fs.Path(path + ".tmp")
        stream = fs.create(aside, True)
        try:
            stream.write(bytearray(text.encode()))
        finally:
            stream.close()
        fs.delete(hadoop, False)
        fs.rename(aside, hadoop)

    def children(self, path: str) -> list[str]:
        fs, hadoop = self._path(path)
        if not fs.exists(hadoop):
            return []
        return [str(status.getPath().getName()) for status in fs.listStatus(hadoop)]

    def make_directories(self, path: str) -> None:
        """``path`` and its parents, as directories (those there already stay)."""
        fs, hadoop = self._path(path)
        fs.mkdirs(hadoop)

    def delete(self, path: str) -> None:
        fs, hadoop = self._path(path)
        fs.delete(hadoop, True)
