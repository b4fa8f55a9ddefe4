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

    def publish(self, staging: str, target: str, prefix: str) -> int:
        """Move the data files under ``staging`` (a writer's output, ``k=v``
        directories kept) into ``target`` as ``<prefix><n><suffix>``, after
        removing files of that prefix a write before left there; then remove
        ``staging``. The number of files moved."""
        fs, source = self._path(staging)
        path = self._jvm.org.apache.hadoop.fs.Path
        root = str(source.toUri().getPath()).rstrip("/") + "/"
        moves: list[tuple[str, str]] = []  # (file, its directory under staging)
        if fs.exists(source):
            found = fs.listFiles(source, True)
            while found.hasNext():
                located = found.next().getPath()
                name = str(located.getName())
                if name.startswith(("_", ".")):
                    continue  # _SUCCESS, checksums
                relative = str(located.toUri().getPath())[len(root) :]
                moves.append((str(located), relative.rpartition("/")[0]))
        cleared: set[str] = set()
        for n, (file, directory) in enumerate(moves):
            into = target.rstrip("/") + (f"/{directory}" if directory else "")
            if into not in cleared:
                fs.mkdirs(path(into))
                for old in fs.globStatus(path(f"{into}/{prefix}*")) or []:
                    fs.delete(old.getPath(), False)
                cleared.add(into)
            name = file.rpartition("/")[2]
            suffix = name[name.index(".") :] if "." in name else ""
            fs.rename(path(file), path(f"{into}/{prefix}{n:05d}{suffix}"))
        fs.delete(source, True)
        return len(moves)

    def delete(self, path: str) -> None:
        fs, hadoop = self._path(path)
        fs.delete(hadoop, True)
