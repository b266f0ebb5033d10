/** The attributes part of the human plan rendering (render.ts calls these two). */
import type { AttributeValue } from '../../platform/user-attributes.ts';
import type { Plan } from '../plan-types.ts';

type Section = (title: string, style: 'green' | 'yellow' | 'red' | 'cyan' | 'gray' | 'magenta', rows: string[][]) => void;

export function attributeSummaryLine(plan: Plan, c: (style: 'green' | 'yellow' | 'red', s: string) => string): string | undefined {
  const a = plan.attributes;
  if (!a) return undefined;
  const s = a.summary;
  const errors = s.errors > 0 ? `, ${c('red', `${s.errors} error(s)`)}` : '';
  return `  attrs:   ${c('green', `+${s.definitionsCreate} definitions`)}, ${c('yellow', `~${s.usersChanged} users (${s.valuesSet} set, ${s.valuesClear} clear)`)}, ${s.movers} movers, ${s.rejected} rejected${errors}`;
}

export function attributeSections(plan: Plan, section: Section): void {
  const a = plan.attributes;
  if (!a) return;
  section(
    'User attribute errors',
    'red',
    a.errors.map((e) => [e.attribute ?? '(all)', e.reason]),
  );
  section(
    'User attribute definitions to create',
    'green',
    a.definitions.create.map((d) => [d.name, d.type]),
  );
  section(
    'User attribute definitions to update',
    'yellow',
    a.definitions.update.map((d) => [d.name, `description: ${show(d.before)} → ${show(d.after)}`]),
  );
  section(
    'User attribute values to change',
    'yellow',
    a.users.map((u) => [
      u.userName,
      u.id === null ? 'new' : '',
      u.changes.map((ch) => `${ch.attribute}: ${show(ch.before)} → ${show(ch.after)}${ch.takesAway ? ' (takes away)' : ''}`).join('; '),
    ]),
  );
  section(
    'Movers (an access-relevant attribute changes)',
    'cyan',
    a.movers.map((m) => [m.userName, m.changes.map((ch) => `${ch.attribute}: ${show(ch.before)} → ${show(ch.after)}`).join('; ')]),
  );
  section(
    'User attribute values rejected (not written)',
    'magenta',
    a.rejected.map((r) => [r.userName, r.attribute, r.reason]),
  );
  section(
    'User attributes not synced',
    'gray',
    a.skipped.map((k) => [k.userName, k.reason]),
  );
}

function show(v: AttributeValue | string | null): string {
  if (v === null) return '∅';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}
