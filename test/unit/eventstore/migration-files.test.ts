import { describe, expect, it } from 'vitest';
import { migrationFiles, splitStatements } from '../../../services/eventstore/migrate';

describe('migrationFiles', () => {
  it('given the sources, then SQL and TypeScript steps run in name order under their own names', () => {
    expect(migrationFiles(['002_b.ts', '001_a.sql', 'README.md', '003_c.sql'])).toEqual([
      ['001_a.sql', '001_a.sql'],
      ['002_b.ts', '002_b.ts'],
      ['003_c.sql', '003_c.sql'],
    ]);
  });

  it('given a compiled dist/ folder, then a .js step runs under its source name, and maps and declarations are not steps', () => {
    expect(migrationFiles(['001_a.sql', '002_b.js', '002_b.js.map', '002_b.d.ts'])).toEqual([
      ['001_a.sql', '001_a.sql'],
      ['002_b.ts', '002_b.js'],
    ]);
  });
});

describe('splitStatements', () => {
  it('given a function body in $$ quotes, then its semicolons do not split it', () => {
    const text = 'CREATE TABLE t (x int);\nCREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION \'no\'; END; $$ LANGUAGE plpgsql;\n';
    expect(splitStatements(text).map((s) => s.trim())).toEqual([
      'CREATE TABLE t (x int)',
      "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'no'; END; $$ LANGUAGE plpgsql",
    ]);
  });
});
