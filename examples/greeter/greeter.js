// The greeter example, built into a component by componentize-js.
let greeting = 'Hello';

export const greeter = {
  // rt calls init once per instance with the configuration, before any call.
  init(config) {
    if (config.length === 0) return;
    let settings;
    try {
      settings = JSON.parse(new TextDecoder().decode(config));
    } catch (e) {
      throw `the configuration is not JSON: ${e.message}`;
    }
    if (typeof settings.greeting !== 'string') throw 'the configuration needs a "greeting" string';
    greeting = settings.greeting;
  },
  greet(name) {
    return `${greeting}, ${name}!`;
  },
  greetPerson(person) {
    const years = person.age === 1 ? 'year' : 'years';
    return `${greeting}, ${person.name}! You are ${person.age} ${years} old.`;
  },
};
