// The greeter example, built into a component by componentize-js.
export const greeter = {
  greet(name) {
    return `Hello, ${name}!`;
  },
  greetPerson(person) {
    const years = person.age === 1 ? 'year' : 'years';
    return `Hello, ${person.name}! You are ${person.age} ${years} old.`;
  },
};
