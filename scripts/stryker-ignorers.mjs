// Mutation testing (npm run mutate): mutants StrykerJS cannot place, left out with the reason it reports.
//
// StrykerJS 9.6.1 writes the UpdateOperator mutant of `(x as number)++` as `x as number--`, dropping the parentheses,
// and the sandbox no longer compiles (the dry run fails). Each such statement loses its one mutant, `++` for `--`;
// the count it keeps is checked by the tests of its own file.
const asUpdate = {
  shouldIgnore(path) {
    if (path.isUpdateExpression() && path.node.argument.type === 'TSAsExpression') {
      return 'StrykerJS drops the parentheses of an updated `as` expression'
    }
    return undefined
  },
}

export const strykerPlugins = [{ kind: 'Ignore', name: 'as-expression-update', value: asUpdate }]
