"""File capabilities inside the user's workspace: ``file_read``, ``file_write``, ``file_list``,
``file_search``.

Every path is resolved by :meth:`Workspace.resolve` (relative to the workspace; absolute paths,
``..`` and symlinks that lead outside are refused). Files are opened with ``O_NOFOLLOW`` and the
opened file is checked again, so a symlink swapped in after the check is not followed.

Errors::

    CapabilityError("forbidden")          the path leads outside the workspace
    CapabilityError("not_found")          no such file or directory
    CapabilityError("exists")             file_write without overwrite onto an existing file
    CapabilityError("too_large")          file_write content above tools.max_write_bytes
    CapabilityInputError("path"|"regex")  a path through a file, a directory given for a file, a bad regex

Limits (``tools`` config): ``max_read_bytes`` (a longer file is cut and flagged ``truncated``),
``max_write_bytes`` (a longer content is refused). A binary file is reported (size, kind), never
dumped. ``file_write`` needs approval only when it may change an existing file (``overwrite``).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from pathlib import Path

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext, capability
from capabilities.tools.workspace import Workspace, forbidden, tools_settings

MAX_LIST_ENTRIES = 1000
MAX_SEARCH_RESULTS = 200
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024
MAX_FILES_VISITED = 20000
_PATH = {"type": "string", "minLength": 1, "maxLength": 4096}
_SEGMENT = r"[A-Za-z0-9_.\-]+"
# what a file's path looks like inside a sentence ("读一下文件 /tmp/x.txt", "save it to
# notes/todo.txt."): a name with an extension, in folders or not, or a path from a root ("/",
# "~/", "./", "../"); not part of a web address, not "e.g."; the capability then judges it
# (an absolute path is refused, not asked for again)
FILE_PATH_IN_TEXT = (r"(?<![A-Za-z0-9_:/.\-~])(?!(?:e\.g|i\.e)\.)(?:"
                     rf"(?:~?/|\.{{1,2}}/)?(?:{_SEGMENT}/)*[A-Za-z0-9_\-]+\.[A-Za-z][A-Za-z0-9]{{0,7}}"
                     rf"|(?:~?/|\.{{1,2}}/)(?:{_SEGMENT}/)*{_SEGMENT}"
                     r")(?![A-Za-z0-9_/\-])")


def _open_checked(workspace: Workspace, path: Path, flags: int, mode: int = 0o644) -> int:
    """Open ``path`` without following a symlink at its end, and make sure it is still inside."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileNotFoundError:
        raise CapabilityError(f"There is no file {workspace.relative(path)!r} in the workspace.",
                              error_type="not_found") from None
    except IsADirectoryError:
        raise CapabilityInputError("path", f"{workspace.relative(path)!r} is a directory, not a file.") from None
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component became a symlink after the check
            raise forbidden(f"{workspace.relative(path)!r} is a symbolic link that changed; refused.") from None
        raise CapabilityError(f"Cannot open {workspace.relative(path)!r}: {exc.strerror}.") from None
    if not workspace.contains(f"/proc/self/fd/{fd}"):
        os.close(fd)
        raise forbidden(f"{workspace.relative(path)!r} leads outside the workspace; refused.")
    return fd


def _is_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 4  # a character cut at the end of the sample is still text
    return False


@capability(
    name="file_read",
    description="Read a text file from the workspace (cut at the configured size, binary files reported, "
                "not shown).",
    parameters={
        "x-flora-description": {"zh": "读取工作区中的一个文本文件（过大则截断，二进制文件只报告不显示）"},
        "type": "object",
        "properties": {
            "path": {**_PATH, "description": "The file's path relative to the workspace, e.g. notes/todo.txt.",
                     "x-flora-description": {"zh": "文件在工作区中的相对路径"},
                     "x-flora-value-pattern": FILE_PATH_IN_TEXT,
                     "x-flora-request-text": True},  # "read the file notes.txt" gives it
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    keywords=("read file", "read the file", "open file", "open the file", "show file", "show the file",
              "读取文件", "打开文件", "查看文件"),
    examples=("show me notes/todo.txt", "读取文件 report.md"),
)
def file_read(path: str, context: ExecutionContext) -> dict:
    workspace = Workspace.for_context(context)
    cap = tools_settings(context).max_read_bytes
    target = workspace.resolve(path)
    fd = _open_checked(workspace, target, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CapabilityInputError("path", f"{path!r} is not a regular file.")
        data = handle.read(cap + 1)
    truncated = len(data) > cap
    data = data[:cap]
    shown = workspace.relative(target)
    if _is_binary(data[:8192]):
        return {"path": shown, "size": info.st_size, "binary": True, "content": None, "truncated": False,
                "message": f"{shown} is a binary file of {info.st_size} bytes; its content is not shown."}
    return {"path": shown, "size": info.st_size, "binary": False, "truncated": truncated,
            "content": data.decode("utf-8", errors="replace")}


@capability(
    name="file_write",
    description="Write text to a file in the workspace (creating folders as needed); replacing an existing "
                "file needs overwrite=true, which asks for approval.",
    parameters={
        "x-flora-description": {"zh": "把文本写入工作区中的文件；覆盖已有文件需要 overwrite=true 并经用户批准"},
        "type": "object",
        "properties": {
            "path": {**_PATH, "description": "The file's path relative to the workspace, e.g. out/result.csv.",
                     "x-flora-description": {"zh": "文件在工作区中的相对路径"},
                     "x-flora-value-pattern": FILE_PATH_IN_TEXT},
            "content": {"type": "string", "description": "The text to write (UTF-8), the whole new content of the file.",
                        "x-flora-description": {"zh": "要写入的文本内容"},
                        "x-flora-written": True},  # "create hello.txt that says hi": the agent writes it
            "overwrite": {"type": "boolean", "default": False,
                          "description": "Replace the file if it exists already (this asks for approval first)."},
            "append": {"type": "boolean", "default": False,
                       "description": "Add the content at the end of an existing file (needs overwrite too)."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    keywords=("write file", "save file", "create file", "写入文件", "保存文件", "创建文件"),
    examples=("save this list to notes/todo.txt", "把结果保存到 result.txt"),
    needs_approval=lambda values: bool(values.get("overwrite")),
    agent_approval=True,  # in the agent loop every write asks: a file it read may have asked for it
)
def file_write(path: str, content: str, context: ExecutionContext, overwrite: bool = False,
               append: bool = False) -> dict:
    workspace = Workspace.for_context(context)
    cap = tools_settings(context).max_write_bytes
    data = content.encode("utf-8")
    if len(data) > cap:
        raise CapabilityError(f"The content is {len(data)} bytes; the most file_write writes is {cap} bytes "
                              "(tools.max_write_bytes).", error_type="too_large")
    target = workspace.resolve(path)
    if target == workspace.root:
        raise CapabilityInputError("path", "Give a file name, not the workspace itself.")
    existed = os.path.lexists(target)
    if existed and not overwrite:
        raise CapabilityError(f"{workspace.relative(target)!r} exists already; write it again with overwrite=true "
                              "to replace (or append to) it.", error_type="exists")
    parent = target.parent
    if not workspace.contains(parent):
        raise forbidden(f"{path!r} leads outside the workspace; refused.")
    made = [folder for folder in (parent, *parent.parents) if workspace.contains(folder) and not folder.exists()]
    parent.mkdir(parents=True, exist_ok=True)
    if not workspace.contains(parent):  # a folder swapped for a symlink meanwhile
        raise forbidden(f"{path!r} leads outside the workspace; refused.")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = _open_checked(workspace, target, flags)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise CapabilityInputError("path", f"{path!r} is not a regular file.")
        handle.write(data)
    workspace.hand_over([*made, target] if not existed else made, tools_settings(context))
    return {"path": workspace.relative(target), "bytes": len(data), "created": not existed,
            "appended": append and existed}


@capability(
    name="file_list",
    description="List the files and folders of a folder in the workspace (names, kinds, sizes).",
    parameters={
        "x-flora-description": {"zh": "列出工作区中某个文件夹里的文件和子文件夹"},
        "type": "object",
        "properties": {
            "path": {**_PATH, "default": ".", "description": "The folder relative to the workspace; '.' is the "
                                                             "workspace itself."},
            "recursive": {"type": "boolean", "default": False,
                          "description": "Also list what is inside sub-folders (up to the listing limit)."},
        },
        "additionalProperties": False,
    },
    keywords=("list files", "list the files", "workspace files", "files in my workspace", "list folder",
              "列出文件", "文件列表", "工作区文件", "工作区里的文件"),
    examples=("what files are in my workspace?", "列出 reports 目录里的文件"),
)
def file_list(context: ExecutionContext, path: str = ".", recursive: bool = False) -> dict:
    workspace = Workspace.for_context(context)
    folder = workspace.resolve(path)
    if not folder.is_dir():
        if not folder.exists():
            raise CapabilityError(f"There is no folder {path!r} in the workspace.", error_type="not_found")
        raise CapabilityInputError("path", f"{path!r} is a file, not a folder.")
    entries, truncated = [], False
    for entry in _walk(folder, recursive):
        if len(entries) >= MAX_LIST_ENTRIES:
            truncated = True
            break
        entries.append(_describe(workspace, entry))
    return {"path": workspace.relative(folder), "entries": entries, "truncated": truncated}


@capability(
    name="file_search",
    description="Find files in the workspace by name pattern (glob) and/or by the text they contain "
                "(plain text or a regular expression); big and binary files are skipped.",
    parameters={
        "x-flora-description": {"zh": "在工作区中按文件名模式和/或内容（文本或正则表达式）查找文件"},
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 256,
                     "description": "A glob pattern for file names, e.g. *.py or report-2024-*.md."},
            "contains": {"type": "string", "minLength": 1, "maxLength": 1024,
                         "description": "Text the file must contain (matched line by line)."},
            "regex": {"type": "boolean", "default": False,
                      "description": "Read 'contains' as a Python regular expression instead of plain text."},
            "path": {**_PATH, "default": ".", "description": "The folder to search in, relative to the workspace."},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS, "default": 50,
                            "description": f"The most matches to return (at most {MAX_SEARCH_RESULTS})."},
        },
        "anyOf": [{"required": ["name"]}, {"required": ["contains"]}],
        "additionalProperties": False,
    },
    # a search said to be among the person's files ("哪份文件里提到过…", "which of my files mention…")
    keywords=("search files", "find file", "grep", "搜索文件", "查找文件", "查找内容", "which file",
              "which of my files", "哪个文件", "哪份文件", "文件里搜", "文件里找"),
    examples=("find the files that mention invoice", "在工作区里找所有 .csv 文件"),
)
def file_search(context: ExecutionContext, name: str | None = None, contains: str | None = None,
                regex: bool = False, path: str = ".", max_results: int = 50) -> dict:
    if not name and not contains:
        raise CapabilityInputError("name", "Give a file name pattern (name) or text to look for (contains).")
    workspace = Workspace.for_context(context)
    folder = workspace.resolve(path)
    if not folder.is_dir():
        raise CapabilityInputError("path", f"{path!r} is not a folder in the workspace.")
    matcher = None
    if contains:
        try:
            matcher = re.compile(contains if regex else re.escape(contains))
        except re.error as exc:
            raise CapabilityInputError("contains", f"{contains!r} is not a valid regular expression: {exc}.") from None
    results, skipped, visited, truncated = [], [], 0, False
    for entry in _walk(folder, True):
        visited += 1
        if visited > MAX_FILES_VISITED or len(results) >= max_results:
            truncated = True
            break
        if not entry.is_file(follow_symlinks=False):
            continue
        rel = workspace.relative(Path(entry.path))
        if name and not fnmatch.fnmatch(entry.name, name):
            continue
        if matcher is None:
            results.append({"path": rel})
            continue
        hits, reason = _grep(entry, matcher)
        if reason:
            skipped.append({"path": rel, "reason": reason})
        elif hits:
            results.append({"path": rel, "matches": hits})
    found = {"results": results, "skipped": skipped[:50], "truncated": truncated}
    if not results and name and contains:  # a guessed name pattern hides what the text would find
        wider = file_search(context, contains=contains, regex=regex, path=path, max_results=max_results)["results"]
        if wider:
            found["without_name_pattern"] = wider
            found["note"] = f"No file named {name!r} contains it; without the name pattern these files do."
    return found


def _walk(folder: Path, recursive: bool):
    """Entries under ``folder``, sorted, never following symlinks into other folders."""
    todo = [folder]
    while todo:
        current = todo.pop(0)
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            yield entry
            if recursive and entry.is_dir(follow_symlinks=False):
                todo.append(Path(entry.path))


def _describe(workspace: Workspace, entry: os.DirEntry) -> dict:
    info = entry.stat(follow_symlinks=False)
    kind = "link" if entry.is_symlink() else "folder" if entry.is_dir(follow_symlinks=False) else "file"
    described = {"path": workspace.relative(Path(entry.path)), "kind": kind, "size": info.st_size}
    if kind == "link":
        described["inside_workspace"] = workspace.contains(entry.path)
    return described


def _grep(entry: os.DirEntry, matcher: re.Pattern) -> tuple[list[dict], str]:
    size = entry.stat(follow_symlinks=False).st_size
    if size > MAX_SEARCH_FILE_BYTES:
        return [], f"larger than {MAX_SEARCH_FILE_BYTES} bytes"
    try:
        fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return [], exc.strerror or "cannot be read"
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_SEARCH_FILE_BYTES)
    if _is_binary(data[:8192]):
        return [], "binary"
    hits = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if matcher.search(line[:4096]):  # a bounded line: a bad pattern cannot take forever on one
            hits.append({"line": number, "text": line[:300]})
            if len(hits) >= 20:
                break
    return hits, ""
