import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const readJson = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));

interface Project {
  type: string;
  root: string;
  sourceRoot: string;
  entryFile: string;
  prefix?: string;
}

const config = readJson('nest-cli.json') as { monorepo: boolean; root: string; sourceRoot: string; projects: Record<string, Project> };
const paths = readJson('tsconfig.json').compilerOptions.paths as Record<string, string[]>;
const projects = Object.entries(config.projects);
const foldersUnder = (dir: string) =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe('nest-cli.json describes the monorepo as it is', () => {
  it('is a monorepo whose default project is the API', () => {
    expect(config.monorepo).toBe(true);
    expect(config.root).toBe('apps/api');
    expect(config.sourceRoot).toBe('apps/api/src');
  });

  it('lists every app under apps/ and every library under libs/, nothing else', () => {
    const of = (type: string) =>
      projects
        .filter(([, project]) => project.type === type)
        .map(([name]) => name)
        .sort();
    expect(of('application')).toEqual(foldersUnder('apps'));
    expect(of('library')).toEqual(foldersUnder('libs'));
    expect(projects.every(([, project]) => ['application', 'library'].includes(project.type))).toBe(true);
  });

  it.each(projects)('%s: its root, source root and entry file exist', (name, project) => {
    const folder = project.type === 'application' ? 'apps' : 'libs';
    expect(project.root).toBe(`${folder}/${name}`);
    expect(project.sourceRoot).toBe(`${project.root}/src`);
    expect(existsSync(join(root, project.sourceRoot, `${project.entryFile}.ts`))).toBe(true);
  });

  it.each(projects.filter(([, project]) => project.type === 'library'))(
    '%s: its prefix is the alias tsconfig.json maps to it',
    (name, project) => {
      expect(project.prefix).toBe('@deals');
      expect(paths[`${project.prefix}/${name}`]).toEqual([project.sourceRoot]);
      expect(paths[`${project.prefix}/${name}/*`]).toEqual([`${project.sourceRoot}/*`]);
    },
  );
});
