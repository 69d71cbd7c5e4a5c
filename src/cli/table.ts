/**
 * Rows under a header row, each column as wide as its widest cell and two spaces apart, for a
 * terminal. The last column is not padded (it is free text: a name); `right` names the columns
 * aligned to the right (numbers).
 */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, right: readonly number[] = []): string {
  const all = [header, ...rows]
  const widths = header.map((_, column) => Math.max(...all.map((row) => row[column]!.length)))
  const last = header.length - 1
  return all
    .map(
      (row) =>
        row
          .map((cell, column) => {
            if (column === last) return cell
            return right.includes(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)
          })
          .join('  ') + '\n',
    )
    .join('')
}
