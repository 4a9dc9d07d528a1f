// DOM helpers shared by the dashboard's views: text only (textContent), never HTML.

export const $ = (id) => document.getElementById(id);

/** A table cell with its label (phones show it), optionally coloured past a threshold and said in words. */
export function cell(row, label, value, level) {
  const td = document.createElement('td');
  td.dataset.label = label;
  td.textContent = value;
  if (level) {
    td.classList.add(level);
    const note = document.createElement('span');
    note.className = 'visually-hidden';
    note.textContent = level === 'alert' ? ' (alert)' : ' (warning)';
    td.append(note);
  }
  row.append(td);
  return td;
}

/** A row header cell. */
export function headerCell(row, label, value) {
  const th = document.createElement('th');
  th.scope = 'row';
  th.dataset.label = label;
  th.textContent = value;
  row.append(th);
  return th;
}

/** Fills a <dl> with [term, value] pairs. */
export function fillFields(dl, pairs) {
  dl.replaceChildren(
    ...pairs.flatMap(([term, value]) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      return [dt, dd];
    }),
  );
}

/** Replaces a table's body rows and shows its "nothing here" note when there are none. */
export function fillTable(tableId, emptyId, rows) {
  $(tableId).tBodies[0].replaceChildren(...rows);
  if (emptyId) $(emptyId).hidden = rows.length > 0;
}
