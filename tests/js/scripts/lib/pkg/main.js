module.exports = 'from package main';
