// What a build says of pixel sizes, as tests expect it: the line for a file whose only stated size is a default.

/** The information line of a build whose files state only defaults (`stated`, the first's), none taken. */
export function defaultLine(file: string, stated: string, files = 1): [string, unknown] {
  const others = files > 1 ? ` (and ${files - 1} other file(s) a default too)` : '';
  return [
    `${file} states ${stated}: no pixel size taken${others}, so the descriptor says nothing of the pixel's physical size; give the annotations a multiscale, or write the file with its real pixel size`,
    { event: 'pixel-size-default', file, stated, files },
  ];
}
